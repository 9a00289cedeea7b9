package ca.helu.pallas.runtime.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.api.ManifestParser;
import ca.helu.pallas.runtime.testing.HttpStatus;
import ca.helu.pallas.runtime.testing.IdleCloseProxy;
import ca.helu.pallas.runtime.testing.McpClients;
import ca.helu.pallas.runtime.testing.RawMcp;
import ca.helu.pallas.runtime.testing.RunningFleet;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
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
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The command line as users run it: the packaged jar in its own JVM. */
class CliIT {
  private static final Path JAR = Path.of("target/pallas-agent-runtime.jar").toAbsolutePath();
  private static final HttpClient HTTP = HttpClient.newHttpClient();
  @TempDir Path dir;

  private Process start(String... args) throws IOException {
    return start(List.of(), args);
  }

  private Process start(List<String> jvmOptions, String... args) throws IOException {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    if (Runtime.version().feature() >= 24) {
      command.add("--sun-misc-unsafe-memory-access=allow");
    }
    command.addAll(jvmOptions);
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
    // a file without an end is read no further than the manifest limit (issue 16 §5)
    Process endless = start("serve", "-f", "/dev/zero");
    assertThat(endless.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(endless.exitValue()).isEqualTo(2);
    assertThat(stderr())
        .contains("/dev/zero", "larger than 1.5 MiB")
        .doesNotContain("OutOfMemoryError", "\tat ");
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
    var spec = ManifestParser.read(file).getSpec();
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

  /**
   * The probe port (docs/runtime.md, "Connections") answers /livez and /readyz of the one agent
   * served, and nothing else; without --agent it is a usage error, as is a connection cap too small
   * for its reserve.
   */
  @Test
  void theProbePortAnswersForTheOneAgentServed() throws Exception {
    Path file =
        manifest(
            HEAD
                + "spec:\n  registry: {port: ${port:registry}}\n  defaultModel: passthrough\n"
                + "  agents: [{name: a, port: ${port:a}}, {name: b, port: ${port:b}}]\n");
    var spec = ManifestParser.read(file).getSpec();
    int a = spec.portOf(spec.agent("a").orElseThrow());
    String probePort = Integer.toString(RunningFleet.unboundPort());
    String probes = "http://127.0.0.1:" + probePort;

    Process every = start("serve", "-f", file.toString(), "--probe-port", probePort);
    assertThat(every.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(every.exitValue()).isEqualTo(2);
    assertThat(stderr()).contains("--probe-port needs --agent").doesNotContain("\tat ");
    Process few = start("serve", "-f", file.toString(), "--agent", "a", "--max-connections", "8");
    assertThat(few.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(few.exitValue()).isEqualTo(2);
    assertThat(stderr()).contains("the connection limit must be at least 16");

    Process p =
        start(
            "serve",
            "-f",
            file.toString(),
            "--agent",
            "a",
            "--probe-port",
            probePort,
            "--max-connections",
            "64");
    try {
      awaitUp(probes + "/readyz", p);
      assertThat(HttpStatus.of(probes + "/livez")).isEqualTo(200);
      assertThat(HttpStatus.of(probes + "/mcp")).isEqualTo(404);
      assertThat(HttpStatus.of(probes + "/metrics")).isEqualTo(404);
      assertThat(get("http://127.0.0.1:" + a + "/metrics"))
          .containsPattern("pallas_http_connections\\{agent=\"a\"} [1-9]");
    } finally {
      p.destroy();
      p.waitFor(30, TimeUnit.SECONDS);
    }
  }

  @Test
  void logsAreJsonWhenNotOnATerminalAndTextWhenAsked() throws Exception {
    Path file =
        manifest(
            HEAD
                + "spec:\n  registry: {port: ${port:registry}}\n  defaultModel: passthrough\n"
                + "  agents: [{name: a, port: ${port:a}}]\n");
    var spec = ManifestParser.read(file).getSpec();
    int a = spec.portOf(spec.agent("a").orElseThrow());
    for (String format : List.of("auto", "text")) {
      Process p = start("serve", "-f", file.toString(), "--agent", "a", "--log-format", format);
      try {
        awaitUp("http://127.0.0.1:" + a + "/readyz", p);
        List<String> logs =
            stdout().lines().filter(l -> l.contains("agent a serving on port")).toList();
        assertThat(logs).hasSize(1);
        if (format.equals("auto")) { // stdout is a file here, as in a container
          assertThat(logs.get(0)).startsWith("{").contains("\"level\":\"INFO\"");
        } else {
          assertThat(logs.get(0))
              .matches("\\d\\d:\\d\\d:\\d\\d\\.\\d{3} INFO  agent a serving on port \\d+");
        }
        // nothing from SLF4J itself, such as its warning that calls logged on one thread while
        // another set logging up were replayed
        assertThat(stderr()).doesNotContain("SLF4J");
      } finally {
        p.destroy();
        p.waitFor(30, TimeUnit.SECONDS);
      }
    }
  }

  /**
   * SIGTERM answers every caller (issue 7 §1): four calls queued on a shared agent (the slow model
   * takes 3 s a turn) and a 2 s drain; the calls still queued or running at the deadline get a
   * clear tool error, not a cut connection, and a call arriving during the drain is refused at
   * once. Callers waiting for their turn are told so by progress. Real SDK clients.
   */
  @Test
  void sigtermAnswersEveryCaller() throws Exception {
    Path file =
        manifest(
            HEAD
                + "spec:\n  registry: {port: ${port:registry}}\n  defaultModel: slow\n"
                + "  agents: [{name: a, port: ${port:a}}]\n");
    var spec = ManifestParser.read(file).getSpec();
    String base = "http://127.0.0.1:" + spec.portOf(spec.agent("a").orElseThrow());
    Process p = start("serve", "-f", file.toString(), "--agent", "a", "--drain-timeout", "2");
    ExecutorService callers = Executors.newCachedThreadPool();
    List<McpSyncClient> clients = new ArrayList<>();
    try {
      awaitUp(base + "/readyz", p);
      List<McpSchema.ProgressNotification> progress = McpClients.newProgressLog();
      List<CompletableFuture<McpSchema.CallToolResult>> calls = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        McpSyncClient client = McpClients.connect(base + "/mcp", null, progress::add);
        clients.add(client);
        String token = "call-" + i;
        calls.add(
            CompletableFuture.supplyAsync(
                () ->
                    client.callTool(
                        McpSchema.CallToolRequest.builder()
                            .name("send_message")
                            .arguments(Map.of("message", token))
                            .progressToken(token)
                            .build()),
                callers));
        // one at a time, so that each finds the ones before it running or queued
        await()
            .atMost(Duration.ofSeconds(10))
            .until(() -> !McpClients.progressOf(progress, token).isEmpty());
      }
      for (int i = 1; i < 4; i++) {
        assertThat(McpClients.progressOf(progress, "call-" + i))
            .anySatisfy(n ->
                assertThat(n.message())
                    .matches("a is answering [1-3] calls? of this conversation first; waiting"));
      }
      McpSyncClient late = McpClients.connect(base + "/mcp");
      clients.add(late);

      long drainStarted = System.nanoTime();
      p.destroy(); // SIGTERM
      await().atMost(Duration.ofSeconds(5)).until(() -> HttpStatus.of(base + "/readyz") == 503);
      long lateStart = System.nanoTime();
      McpSchema.CallToolResult refused = McpClients.send(late, "send_message", "too late");
      assertThat(Duration.ofNanos(System.nanoTime() - lateStart)).isLessThan(Duration.ofSeconds(1));
      assertThat(refused.isError()).isTrue();
      assertThat(McpClients.text(refused)).contains("is shutting down; retry on another replica");

      // every caller is answered: by its turn when it finished within the drain (call-0 may, on
      // a loaded machine that took long to queue the others), else by the shutdown error; the
      // last one, behind three 3 s turns, always meets the deadline
      for (int i = 0; i < calls.size(); i++) {
        McpSchema.CallToolResult result = calls.get(i).get(10, TimeUnit.SECONDS);
        if (i == calls.size() - 1 || Boolean.TRUE.equals(result.isError())) {
          assertThat(result.isError()).as(McpClients.text(result)).isTrue();
          assertThat(McpClients.text(result))
              .contains("is shutting down and could not finish this call; retry");
        } else {
          assertThat(McpClients.text(result)).isEqualTo("call-" + i);
        }
      }
      assertThat(Duration.ofNanos(System.nanoTime() - drainStarted))
          .isLessThan(Duration.ofSeconds(7));
      assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    } finally {
      clients.forEach(McpSyncClient::close);
      callers.shutdownNow();
      p.destroyForcibly();
    }
  }

  @Test
  void sigtermLetsCallsInProgressFinishThenStops() throws Exception {
    Path file =
        manifest(
            HEAD
                + "spec:\n  registry: {port: ${port:registry}}\n  defaultModel: slow\n"
                + "  agents: [{name: s, port: ${port:s}, instanceScope: request}]\n");
    var spec = ManifestParser.read(file).getSpec();
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

  /**
   * A server that closes a kept-alive connection just as the next request arrives on it (what a
   * draining replica does to idle connections, docs/runtime.md, "Errors callers see") costs no
   * call: the request, of which no byte was read, is sent again on a new connection. The JDK's
   * client does that for POSTs only when told, which the command does; told otherwise, the call
   * fails, as it did in DurableFleetIT's rollouts.
   */
  @Test
  void aKeptAliveConnectionClosedUnderARequestCostsNoCall() throws Exception {
    int helper = RunningFleet.unboundPort();
    try (IdleCloseProxy proxy = new IdleCloseProxy(helper)) {
      Path file =
          manifest(
              HEAD
                  + "spec:\n  registry: {port: ${port:registry}}\n  defaultModel: passthrough\n"
                  + "  mcpServers: [{name: proxied, url: 'http://127.0.0.1:"
                  + proxy.port()
                  + "/mcp'}]\n"
                  + "  agents:\n    - {name: helper, port: "
                  + helper
                  + "}\n    - {name: coordinator, port: ${port:coordinator}, servers: [proxied]}\n");
      var spec = ManifestParser.read(file).getSpec();
      int coordinator = spec.portOf(spec.agent("coordinator").orElseThrow());
      String call = "***CALL_TOOL proxied__send_message {\"message\": \"relayed\"}";
      for (boolean retried : List.of(true, false)) {
        Process p =
            start(
                retried ? List.of() : List.of("-Djdk.httpclient.enableAllMethodRetry=false"),
                "serve",
                "-f",
                "deployment.yaml");
        try {
          // both agents of the process up, so that the coordinator's first turn lists the tools
          awaitUp("http://127.0.0.1:" + helper + "/readyz", p);
          awaitUp("http://127.0.0.1:" + coordinator + "/readyz", p);
          RawMcp session = RawMcp.open("http://127.0.0.1:" + coordinator + "/mcp", null);
          assertThat(RawMcp.text(session.callTool("send_message", Map.of("message", call))))
              .isEqualTo("relayed");
          int before = proxy.closedUnderRequests();
          proxy.closeNextReuse();
          String second = RawMcp.text(session.callTool("send_message", Map.of("message", call)));
          assertThat(proxy.closedUnderRequests()).isEqualTo(before + 1);
          if (retried) {
            assertThat(second).isEqualTo("relayed");
          } else {
            assertThat(second).contains("proxied/send_message failed", "the connection failed");
          }
        } finally {
          p.destroy();
          p.waitFor(30, TimeUnit.SECONDS);
        }
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
    int port = ManifestParser.read(file).getSpec().effectiveRegistry().effectivePort();
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
      // the registry's own signal that it read the invalid change and refused it
      await()
          .atMost(Duration.ofSeconds(15))
          .until(() -> stdout().contains("still serving the last good one"));
      assertThat(get(url))
          .as("an invalid change keeps the last good manifest")
          .contains("local.pallas/extra");
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
    try (Socket s = new Socket("127.0.0.1", port)) {
      return true;
    } catch (IOException e) {
      return false;
    }
  }
}
