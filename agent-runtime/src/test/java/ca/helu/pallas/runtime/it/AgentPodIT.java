package ca.helu.pallas.runtime.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.api.ManifestParser;
import ca.helu.pallas.api.PallasDeploymentSpec;
import ca.helu.pallas.api.SecretValue;
import ca.helu.pallas.api.SecretVariables;
import ca.helu.pallas.runtime.serve.DefaultAgentParts;
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
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Agent pods as the operator runs them (docs/operator.md, "Pods"): the packaged jar, {@code serve
 * --agent NAME} of the whole fleet's manifest, with only that agent's Secret keys in its
 * environment. A pod checks the provider its own agent uses, with its key, and nothing else; its
 * metrics describe itself, not the fleet (issue 17 §8: three of four pods reported another agent's
 * provider down, with HTTP 401, and the critical PallasLLMProviderDown alert fired).
 */
class AgentPodIT {
  private static final Path JAR = Path.of("target/pallas-agent-runtime.jar").toAbsolutePath();
  private static final HttpClient HTTP = HttpClient.newHttpClient();
  private static final String OPENAI_KEY = "sk-writer-0000";
  private static final String ANTHROPIC_KEY = "sk-ant-critic-1111";

  @TempDir Path dir;
  private FakeLlmServer openai;
  private FakeLlmServer anthropic;
  private PallasDeploymentSpec spec;
  private final List<Process> started = new ArrayList<>();

  @BeforeEach
  void fleet() throws IOException {
    // both providers refuse a request without their key, as the real ones do
    openai = FakeLlmServer.openAi("qwen3-8b").requireKey(OPENAI_KEY);
    anthropic = FakeLlmServer.anthropic("claude-sonnet-4-5").requireKey(ANTHROPIC_KEY);
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
                - {name: writer, port: ${port:writer}, model: openai.qwen3-8b}
                - {name: critic, port: ${port:critic}, model: anthropic.claude-sonnet-4-5}
                - {name: helper, port: ${port:helper}, model: passthrough, podGroup: small,
                   dependsOn: [writer]}
            """
                .formatted(openai.baseUrl(), anthropic.baseUrl())));
    spec = ManifestParser.read(file).getSpec();
  }

  @AfterEach
  void stop() throws InterruptedException {
    for (Process p : started) {
      p.destroy();
      p.waitFor(30, TimeUnit.SECONDS);
    }
    openai.close();
    anthropic.close();
  }

  @Test
  void anAgentPodChecksOnlyItsOwnProviderWithItsOwnKey() throws Exception {
    // the writer's pod: the operator gives it the openai key only
    Process writer = serve(Map.of(variable("openai"), OPENAI_KEY), "--agent", "writer");
    String metrics = metrics("writer", writer);
    assertThat(anthropic.requests())
        .as("the critic's provider is not the writer pod's business")
        .isEmpty();
    assertThat(openai.requests())
        .singleElement()
        .satisfies(r -> {
          assertThat(r.path()).isEqualTo("/v1/models");
          assertThat(r.header("Authorization")).isEqualTo("Bearer " + OPENAI_KEY);
        });
    assertThat(metrics)
        .contains("pallas_llm_provider_up{provider=\"openai\"} 1.0")
        .doesNotContain("provider=\"anthropic\"");
    assertThat(log("writer")).doesNotContain("HTTP 401").doesNotContain("preflight failed");

    // the critic's pod: the anthropic key only
    Process critic = serve(Map.of(variable("anthropic"), ANTHROPIC_KEY), "--agent", "critic");
    metrics = metrics("critic", critic);
    assertThat(openai.requests()).as("nothing more than the writer's own check").hasSize(1);
    assertThat(anthropic.requests())
        .singleElement()
        .satisfies(r -> {
          assertThat(r.path()).isEqualTo("/v1/models/claude-sonnet-4-5");
          assertThat(r.header("x-api-key")).isEqualTo(ANTHROPIC_KEY);
        });
    assertThat(metrics)
        .contains("pallas_llm_provider_up{provider=\"anthropic\"} 1.0")
        .doesNotContain("provider=\"openai\"");
    assertThat(log("critic")).doesNotContain("HTTP 401").doesNotContain("preflight failed");
  }

  /** pallas_agent_info is one series per pod: the agent it serves, not every agent of the fleet. */
  @Test
  void anAgentPodDescribesOnlyItsOwnAgent() throws Exception {
    Process writer = serve(Map.of(variable("openai"), OPENAI_KEY), "--agent", "writer");
    assertThat(infoSeries(metrics("writer", writer)))
        .containsExactly("pallas_agent_info{agent=\"writer\",port=\"" + port("writer") + "\"} 1");
  }

  /** Without --agent, one process serves every agent: it checks every agent's provider. */
  @Test
  void serveWithoutAgentChecksEveryAgentsProvider() throws Exception {
    Process all =
        serve(Map.of(variable("openai"), OPENAI_KEY, variable("anthropic"), ANTHROPIC_KEY));
    String metrics = metrics("writer", all);
    assertThat(openai.requests()).hasSize(1);
    assertThat(anthropic.requests()).hasSize(1);
    assertThat(metrics)
        .contains(
            "pallas_llm_provider_up{provider=\"openai\"} 1.0",
            "pallas_llm_provider_up{provider=\"anthropic\"} 1.0");
    assertThat(infoSeries(metrics))
        .containsExactlyInAnyOrder(
            "pallas_agent_info{agent=\"writer\",port=\"" + port("writer") + "\"} 1",
            "pallas_agent_info{agent=\"critic\",port=\"" + port("critic") + "\"} 1",
            "pallas_agent_info{agent=\"helper\",port=\"" + port("helper") + "\"} 1");
  }

  /**
   * A pod group's pod (docs/operator.md, "Agents sharing a pod"): one process serves the writer and
   * the helper, each on its own port with its own /readyz and its own series on /metrics; the probe
   * port answers for both; the process checks the providers of its own agents only, with their keys
   * (the group's pod holds the writer's key, not the critic's).
   */
  @Test
  void aPodGroupsPodServesEachOfItsAgentsOnItsOwnPort() throws Exception {
    int probePort;
    try (ServerSocket free = new ServerSocket(0)) {
      probePort = free.getLocalPort();
    }
    Process pod =
        serve(
            Map.of(variable("openai"), OPENAI_KEY),
            "--agent",
            "writer",
            "--agent",
            "helper",
            "--probe-port",
            Integer.toString(probePort));
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
    assertThat(anthropic.requests()).isEmpty();
    assertThat(openai.requests())
        .singleElement()
        .satisfies(r -> assertThat(r.header("Authorization")).isEqualTo("Bearer " + OPENAI_KEY));

    try (McpSyncClient helper = McpClients.connect(url("helper", "/mcp"))) {
      assertThat(McpClients.text(McpClients.send(helper, "send_message", "from the group")))
          .isEqualTo("from the group");
    }
    // each port shows its agent's series; the process's own once, on the first agent's port (the
    // JVM's are bound just after ready)
    String writer =
        await()
            .atMost(Duration.ofSeconds(30))
            .until(() -> get(url("writer", "/metrics")), m -> m.contains("jvm_memory_used_bytes"));
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
    return "http://127.0.0.1:" + port(agent) + path;
  }

  private static String get(String url) throws IOException, InterruptedException {
    return HTTP.send(
            HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString())
        .body();
  }

  /** The re-probes of a pod, like its first check, go to its own agent's provider only. */
  @Test
  void reprobesGoToTheOwnProviderOnly() {
    DefaultAgentParts.Timings often =
        new DefaultAgentParts.Timings(
            Duration.ofMillis(100),
            Duration.ofSeconds(15),
            Duration.ofSeconds(3),
            Duration.ofMillis(100),
            Duration.ofMinutes(1),
            DefaultAgentParts.Timings.DEFAULT.retry());
    try (RunningFleet pod =
        RunningFleet.start(
            """
            apiVersion: pallas.helu.ca/v1alpha1
            kind: PallasDeployment
            metadata: {name: pods}
            spec:
              registry: {port: ${port:registry}}
              providers:
                openai: {baseUrl: "%s", apiKey: {secretKeyRef: {name: llm, key: openai}}}
                anthropic: {baseUrl: "%s", apiKey: {secretKeyRef: {name: llm, key: anthropic}}}
              agents:
                - {name: writer, port: ${port:writer}, model: openai.qwen3-8b}
                - {name: critic, port: ${port:critic}, model: anthropic.claude-sonnet-4-5}
            """
                .formatted(openai.baseUrl(), anthropic.baseUrl()),
            Map.of(variable("anthropic"), ANTHROPIC_KEY),
            options -> options.withOnlyAgent("critic"),
            often)) {
      await().atMost(Duration.ofSeconds(30)).until(() -> anthropic.requests().size() >= 3);
      assertThat(openai.requests()).isEmpty();
      assertThat(pod.metrics().scrape()).doesNotContain("provider=\"openai\"");
    }
  }

  private static String variable(String key) {
    return SecretVariables.nameFor(new SecretValue.SecretKeyRef("llm", key));
  }

  private int port(String agent) {
    return spec.portOf(spec.agent(agent).orElseThrow());
  }

  private static List<String> infoSeries(String metrics) {
    return metrics.lines().filter(l -> l.startsWith("pallas_agent_info{")).toList();
  }

  /** {@code serve ARGS} of the fleet's manifest with exactly these keys in its environment. */
  private Process serve(Map<String, String> keys, String... args) throws IOException {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    if (Runtime.version().feature() >= 24) {
      command.add("--sun-misc-unsafe-memory-access=allow");
    }
    command.addAll(List.of("-Xmx256m", "-jar", JAR.toString(), "serve", "-f", "deployment.yaml"));
    command.addAll(List.of(args));
    String name = args.length > 1 ? args[1] : "all";
    ProcessBuilder builder =
        new ProcessBuilder(command)
            .directory(dir.toFile())
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve(name + ".log").toFile());
    Pattern providerKeys = Pattern.compile("PALLAS_SECRET_.*|OPENAI_.*|ANTHROPIC_.*");
    builder.environment().keySet().removeIf(k -> providerKeys.matcher(k).matches());
    builder.environment().putAll(keys);
    Process p = builder.start();
    started.add(p);
    return p;
  }

  private String log(String name) throws IOException {
    return Files.readString(dir.resolve(name + ".log"));
  }

  /**
   * The agent's /metrics once it is ready (its provider checked: serve checks before it listens).
   */
  private String metrics(String agent, Process p) throws Exception {
    await()
        .atMost(Duration.ofSeconds(60))
        .failFast("serve exited", () -> !p.isAlive())
        .until(() -> HttpStatus.of(url(agent, "/readyz")) == 200);
    return get(url(agent, "/metrics"));
  }
}
