package ca.helu.pallas.runtime.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.api.ManifestParser;
import ca.helu.pallas.api.PallasDeploymentSpec;
import ca.helu.pallas.api.SecretValue;
import ca.helu.pallas.api.SecretVariables;
import ca.helu.pallas.runtime.testing.FakeLlmServer;
import ca.helu.pallas.runtime.testing.HttpStatus;
import ca.helu.pallas.runtime.testing.McpClients;
import ca.helu.pallas.runtime.testing.RunningFleet;
import io.modelcontextprotocol.client.McpSyncClient;
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
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A pod group's pod as the operator runs it (docs/operator.md, "Agents sharing a pod"): the
 * packaged jar, {@code serve --agent writer --agent helper --probe-port P} of a manifest with a
 * third agent, which runs elsewhere. One process serves both agents, each on its own port with its
 * own /readyz and its own series on /metrics; the probe port answers for both; the process checks
 * the providers of its own agents only, with their keys.
 */
class PodGroupProcessIT {
  private static final Path JAR = Path.of("target/pallas-agent-runtime.jar").toAbsolutePath();
  private static final HttpClient HTTP = HttpClient.newHttpClient();
  private static final String OPENAI_KEY = "sk-writer-0000";

  @TempDir Path dir;
  private FakeLlmServer openai;
  private FakeLlmServer anthropic;
  private PallasDeploymentSpec spec;
  private Process pod;
  private int probePort;

  @BeforeEach
  void start() throws IOException {
    openai = FakeLlmServer.openAi("qwen3-8b").requireKey(OPENAI_KEY);
    anthropic = FakeLlmServer.anthropic("claude-sonnet-4-5");
    Path file = dir.resolve("deployment.yaml");
    Files.writeString(
        file,
        RunningFleet.withFreePorts(
            """
            apiVersion: pallas.helu.ca/v1alpha1
            kind: PallasDeployment
            metadata: {name: pods}
            spec:
              registry: {port: ${port:registry}}
              providers:
                openai: {baseUrl: "%s", apiKey: {secretKeyRef: {name: llm, key: openai}}}
                anthropic: {baseUrl: "%s", apiKey: {secretKeyRef: {name: llm, key: anthropic}}}
              podGroups: [{name: small}]
              agents:
                - {name: writer, port: ${port:writer}, model: openai.qwen3-8b, podGroup: small}
                - {name: critic, port: ${port:critic}, model: anthropic.claude-sonnet-4-5}
                - {name: helper, port: ${port:helper}, model: passthrough, podGroup: small,
                   dependsOn: [writer]}
            """
                .formatted(openai.baseUrl(), anthropic.baseUrl())));
    spec = ManifestParser.read(file).getSpec();
    try (ServerSocket free = new ServerSocket(0)) {
      probePort = free.getLocalPort();
    }
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    if (Runtime.version().feature() >= 24) {
      command.add("--sun-misc-unsafe-memory-access=allow");
    }
    command.addAll(
        List.of(
            "-Xmx256m",
            "-jar",
            JAR.toString(),
            "serve",
            "-f",
            "deployment.yaml",
            "--agent",
            "writer",
            "--agent",
            "helper",
            "--probe-port",
            Integer.toString(probePort)));
    ProcessBuilder builder =
        new ProcessBuilder(command)
            .directory(dir.toFile())
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("pod.log").toFile());
    Pattern providerKeys = Pattern.compile("PALLAS_SECRET_.*|OPENAI_.*|ANTHROPIC_.*");
    builder.environment().keySet().removeIf(k -> providerKeys.matcher(k).matches());
    // the group's pod holds the keys of its agents: the writer's openai key, not the critic's
    builder
        .environment()
        .put(SecretVariables.nameFor(new SecretValue.SecretKeyRef("llm", "openai")), OPENAI_KEY);
    pod = builder.start();
  }

  @AfterEach
  void stop() throws InterruptedException {
    pod.destroy();
    pod.waitFor(30, TimeUnit.SECONDS);
    openai.close();
    anthropic.close();
  }

  @Test
  void oneProcessServesTheGroupsAgentsEachOnItsOwnPort() throws Exception {
    await()
        .atMost(Duration.ofSeconds(60))
        .failFast("serve exited", () -> !pod.isAlive())
        .until(() -> HttpStatus.of("http://127.0.0.1:" + probePort + "/readyz") == 200);
    assertThat(HttpStatus.of(url("writer", "/readyz"))).isEqualTo(200);
    assertThat(HttpStatus.of(url("helper", "/readyz"))).isEqualTo(200);
    assertThat(HttpStatus.of("http://127.0.0.1:" + probePort + "/livez")).isEqualTo(200);
    assertThat(HttpStatus.of("http://127.0.0.1:" + probePort + "/metrics"))
        .as("the probe port answers probes only")
        .isEqualTo(404);
    assertThat(HttpStatus.of(url("critic", "/readyz")))
        .as("the critic runs in a pod of its own")
        .isEqualTo(-1);

    // the providers of its own agents, with their keys; not the critic's
    assertThat(anthropic.requests()).isEmpty();
    assertThat(openai.requests())
        .singleElement()
        .satisfies(r -> assertThat(r.header("Authorization")).isEqualTo("Bearer " + OPENAI_KEY));

    try (McpSyncClient helper = McpClients.connect(url("helper", "/mcp"))) {
      assertThat(McpClients.text(McpClients.send(helper, "send_message", "from the group")))
          .isEqualTo("from the group");
    }

    // each port shows its agent's series; the process's own once, on the first agent's port
    String writer = awaitMetrics("writer", "jvm_memory_used_bytes");
    String helper = get(url("helper", "/metrics"));
    assertThat(writer)
        .contains("pallas_agent_info{agent=\"writer\"", "pallas_up 1.0")
        .contains("pallas_llm_provider_up{provider=\"openai\"} 1.0")
        .doesNotContain("agent=\"helper\"", "agent=\"critic\"");
    assertThat(helper)
        .contains(
            "pallas_agent_info{agent=\"helper\"",
            "pallas_send_message_total{agent=\"helper\",outcome=\"ok\"} 1.0")
        .doesNotContain("agent=\"writer\"", "jvm_", "pallas_up", "pallas_llm_provider_up");
  }

  private String url(String agent, String path) {
    return "http://127.0.0.1:" + spec.portOf(spec.agent(agent).orElseThrow()) + path;
  }

  /** The agent's /metrics once it shows {@code series} (the JVM's are bound after ready). */
  private String awaitMetrics(String agent, String series) {
    return await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> get(url(agent, "/metrics")), m -> m.contains(series));
  }

  private static String get(String url) throws IOException, InterruptedException {
    return HTTP.send(
            HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString())
        .body();
  }
}
