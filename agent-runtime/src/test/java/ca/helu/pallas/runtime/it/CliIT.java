package ca.helu.pallas.runtime.it;

import static org.assertj.core.api.Assertions.assertThat;

import ca.helu.pallas.runtime.testing.RawMcp;
import ca.helu.pallas.runtime.testing.RunningFleet;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The command line as users run it: the packaged jar in its own JVM. */
class CliIT {
  private static final Path JAR = Path.of("target/pallas-agent-runtime.jar").toAbsolutePath();
  private static final HttpClient HTTP = HttpClient.newHttpClient();
  @TempDir Path dir;

  private Process start(String... args) throws IOException {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    if (Runtime.version().feature() >= 24) {
      command.add("--sun-misc-unsafe-memory-access=allow");
    }
    command.addAll(List.of("-Xmx256m", "-jar", JAR.toString()));
    command.addAll(List.of(args));
    return new ProcessBuilder(command)
        .directory(dir.toFile())
        .redirectOutput(dir.resolve("stdout.log").toFile())
        .redirectError(dir.resolve("stderr.log").toFile())
        .start();
  }

  private String stdout() throws IOException {
    return Files.readString(dir.resolve("stdout.log"));
  }

  private String stderr() throws IOException {
    return Files.readString(dir.resolve("stderr.log"));
  }

  private Path manifest(String yaml) throws IOException {
    Path file = dir.resolve("deployment.yaml");
    Files.writeString(file, RunningFleet.withFreePorts(yaml));
    return file;
  }

  private static final String HEAD =
      "apiVersion: pallas.helu.ca/v1alpha1\nkind: PallasDeployment\nmetadata: {name: cli}\n";

  @Test
  void anInvalidManifestExitsWithCode2AndNamesEveryProblem() throws Exception {
    manifest(
        HEAD
            + "spec:\n  defaultModel: passthrough\n  agents:\n"
            + "    - {name: a, servers: [nowhere]}\n    - {name: a, instruction: x, tempreature: 1}\n");
    Process p = start("serve", "-f", "deployment.yaml");
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).isEqualTo(2);
    assertThat(stderr())
        .contains("invalid PallasDeployment in deployment.yaml")
        .contains("spec.agents[1].tempreature: unknown field 'tempreature'")
        .doesNotContain("\tat ");
    Process missing = start("serve", "-f", "nope.yaml");
    assertThat(missing.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(missing.exitValue()).isEqualTo(2);
    assertThat(stderr()).contains("nope.yaml").contains("cannot read file");
  }

  @Test
  void aPortInUseIsNamedAndNothingIsLeftRunning() throws Exception {
    try (ServerSocket taken = new ServerSocket(0)) {
      manifest(
          HEAD
              + "spec:\n  registry: {port: ${port:registry}}\n  defaultModel: passthrough\n"
              + "  agents: [{name: a, port: "
              + taken.getLocalPort()
              + "}]\n");
      Process p = start("serve", "-f", "deployment.yaml");
      assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
      assertThat(p.exitValue()).isEqualTo(1);
      assertThat(stderr())
          .contains("cannot listen on port " + taken.getLocalPort() + " for agent a");
    }
  }

  @Test
  void singleAgentModeServesThatAgentOnlyAndDotEnvNamesTheManifest() throws Exception {
    Path file =
        manifest(
            HEAD
                + "spec:\n  registry: {port: ${port:registry}}\n  defaultModel: passthrough\n"
                + "  agents: [{name: a, port: ${port:a}}, {name: b, port: ${port:b}}]\n");
    Files.writeString(dir.resolve(".env"), "PALLAS_DEPLOYMENT_FILE=" + file.getFileName() + "\n");
    var spec = ca.helu.pallas.api.ManifestParser.read(file).getSpec();
    int a = spec.portOf(spec.agent("a").orElseThrow());
    int b = spec.portOf(spec.agent("b").orElseThrow());
    int registry = spec.effectiveRegistry().effectivePort();
    Process p = start("serve", "--agent", "b");
    try {
      awaitUp("http://127.0.0.1:" + b + "/readyz", p);
      assertThat(stdout())
          .contains("agent b: http://localhost:" + b + "/mcp")
          .doesNotContain("registry:");
      assertThat(listening(a)).isFalse();
      assertThat(listening(registry)).isFalse();
    } finally {
      p.destroy();
      p.waitFor(30, TimeUnit.SECONDS);
    }
    Process wrong = start("serve", "--agent", "zzz");
    assertThat(wrong.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(wrong.exitValue()).isEqualTo(1);
    assertThat(stderr()).contains("--agent zzz: no such agent").contains("[a, b]");
  }

  @Test
  void sigtermLetsCallsInProgressFinishThenStops() throws Exception {
    Path file =
        manifest(
            HEAD
                + "spec:\n  registry: {port: ${port:registry}}\n  defaultModel: slow\n"
                + "  agents: [{name: s, port: ${port:s}, instanceScope: request}]\n");
    var spec = ca.helu.pallas.api.ManifestParser.read(file).getSpec();
    int port = spec.portOf(spec.agent("s").orElseThrow());
    Process p = start("serve", "-f", "deployment.yaml", "--drain-timeout", "20");
    awaitUp("http://127.0.0.1:" + port + "/readyz", p);
    RawMcp mcp = RawMcp.open("http://127.0.0.1:" + port + "/mcp", null);
    CompletableFuture<String> inFlight =
        CompletableFuture.supplyAsync(() -> {
          try {
            return RawMcp.text(mcp.callTool("send_message", Map.of("message", "finish me")));
          } catch (Exception e) {
            return "failed: " + e;
          }
        });
    Thread.sleep(1000); // the slow model takes 3 s
    p.destroy(); // SIGTERM
    assertThat(inFlight.get(30, TimeUnit.SECONDS)).isEqualTo("finish me");
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(stdout()).contains("shutting down: draining calls in progress");
    for (String line : stdout().split("\n")) {
      if (line.startsWith("{")) {
        new ObjectMapper().readTree(line); // every log line is one JSON object
      }
    }
  }

  @Test
  void theRegistryCommandPicksUpChangesAndKeepsTheLastGoodManifest() throws Exception {
    Path file =
        manifest(
            HEAD.replace("metadata: {name: cli}", "metadata: {name: cli, namespace: ai}")
                + "spec:\n  registry: {port: ${port:registry}}\n  defaultModel: passthrough\n"
                + "  agents: [{name: tech_research, port: 9001}]\n");
    int port =
        ca.helu.pallas.api.ManifestParser.read(file).getSpec().effectiveRegistry().effectivePort();
    Process p = start("registry", "-f", "deployment.yaml", "--reload-seconds", "1");
    try {
      String url = "http://127.0.0.1:" + port + "/.well-known/mcp/server.json";
      awaitUp(url, p);
      assertThat(get(url)).contains("\"url\":\"http://cli-tech-research.ai.svc:9001/mcp\"");
      String yaml = Files.readString(file);
      Files.writeString(
          file,
          yaml.replace(
              "agents: [{name: tech_research, port: 9001}]",
              "agents: [{name: tech_research, port: 9001}, {name: extra, port: 9002}]"));
      assertThat(eventually(() -> get(url).contains("local.pallas/extra"))).isTrue();
      Files.writeString(file, yaml.replace("agents:", "agentz:"));
      Thread.sleep(2500);
      assertThat(get(url))
          .as("an invalid change keeps the last good manifest")
          .contains("local.pallas/extra");
      assertThat(stdout()).contains("still serving the last good one");
    } finally {
      p.destroy();
      p.waitFor(30, TimeUnit.SECONDS);
    }
  }

  private interface Check {
    boolean ok() throws Exception;
  }

  private static boolean eventually(Check check) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
    while (System.nanoTime() < deadline) {
      if (check.ok()) {
        return true;
      }
      Thread.sleep(200);
    }
    return false;
  }

  private void awaitUp(String url, Process p) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (System.nanoTime() < deadline) {
      if (!p.isAlive()) {
        throw new AssertionError("exited " + p.exitValue() + ":\n" + stdout() + stderr());
      }
      try {
        if (HTTP.send(
                    HttpRequest.newBuilder(URI.create(url)).build(),
                    HttpResponse.BodyHandlers.discarding())
                .statusCode()
            == 200) {
          return;
        }
      } catch (IOException e) {
        Thread.sleep(50);
      }
    }
    throw new AssertionError(url + " never answered");
  }

  private static String get(String url) throws Exception {
    return HTTP.send(
            HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString())
        .body();
  }

  private static boolean listening(int port) {
    try (java.net.Socket s = new java.net.Socket("127.0.0.1", port)) {
      return true;
    } catch (IOException e) {
      return false;
    }
  }
}
