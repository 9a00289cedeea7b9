package ca.helu.pallas.runtime.it;

import static ca.helu.pallas.runtime.testing.McpClients.send;
import static ca.helu.pallas.runtime.testing.McpClients.text;
import static org.assertj.core.api.Assertions.assertThat;

import ca.helu.pallas.runtime.llm.Retry;
import ca.helu.pallas.runtime.serve.DefaultAgentParts;
import ca.helu.pallas.runtime.testing.FakeLlmServer;
import ca.helu.pallas.runtime.testing.McpClients;
import ca.helu.pallas.runtime.testing.RunningFleet;
import ca.helu.pallas.runtime.testing.TestMcpServer;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The agent loop against fake OpenAI-compatible and Anthropic endpoints speaking their wire
 * formats.
 */
class ProvidersIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String OPENAI_KEY = "sk-test-secret-1234";
  private static final String ANTHROPIC_KEY = "sk-ant-secret-5678";
  private static FakeLlmServer openai;
  private static FakeLlmServer anthropic;
  private static TestMcpServer tools;
  private static RunningFleet fleet;

  @BeforeAll
  static void start() throws Exception {
    openai = FakeLlmServer.openAi("qwen3-8b");
    anthropic = FakeLlmServer.anthropic("claude-sonnet-4-5", "claude-opus-4-7");
    tools = TestMcpServer.start();
    fleet =
        RunningFleet.start(
            """
            apiVersion: pallas.helu.ca/v1alpha1
            kind: PallasDeployment
            metadata: {name: providers}
            spec:
              registry: {port: ${port:registry}}
              providers:
                openai: {baseUrl: "%s", apiKey: {env: TEST_OPENAI_KEY}}
                anthropic: {baseUrl: "%s", apiKey: {env: TEST_ANTHROPIC_KEY}}
              mcpServers: [{name: tools, url: "%s"}]
              agents:
                - name: oa
                  port: ${port:oa}
                  model: openai.qwen3-8b
                  instruction: You are terse.
                  servers: [tools]
                  instanceScope: request
                  requestParams: {temperature: 0.5, topP: 0.9, topK: 40, maxTokens: 256, maxIterations: 3}
                - name: an
                  port: ${port:an}
                  model: anthropic.claude-sonnet-4-5
                  instruction: You are terse.
                  servers: [tools]
                  instanceScope: request
                  requestParams: {temperature: 0.5, topK: 40}
                - name: opus
                  port: ${port:opus}
                  model: anthropic.claude-opus-4-7
                  instanceScope: request
                  requestParams: {temperature: 0.5, topP: 0.9, topK: 40}
                - name: missing
                  port: ${port:missing}
                  model: openai.not-served
                - name: serial
                  port: ${port:serial}
                  model: openai.qwen3-8b
                  servers: [tools]
                  instanceScope: request
                  requestParams: {parallelToolCalls: false}
            """
                .formatted(openai.baseUrl(), anthropic.baseUrl(), tools.url()),
            Map.of("TEST_OPENAI_KEY", OPENAI_KEY, "TEST_ANTHROPIC_KEY", ANTHROPIC_KEY),
            new DefaultAgentParts.Timings(
                Duration.ofMillis(100),
                Duration.ofSeconds(15),
                Duration.ofSeconds(3),
                Duration.ofMinutes(5),
                Duration.ofMinutes(1),
                new Retry(3, Duration.ofMillis(20), Duration.ofSeconds(2))));
  }

  @AfterAll
  static void stop() {
    fleet.close();
    openai.close();
    anthropic.close();
    tools.close();
  }

  @BeforeEach
  void clear() {
    openai.reset();
    anthropic.reset();
  }

  @Test
  void openAiToolCallRoundTripWithParamsUsageAndKey() throws Exception {
    String turns = "pallas_llm_turns_total{agent=\"oa\",model=\"qwen3-8b\"}";
    String input = "pallas_llm_tokens_total{agent=\"oa\",kind=\"input\",model=\"qwen3-8b\"}";
    String cached = "pallas_llm_tokens_total{agent=\"oa\",kind=\"cache_read\",model=\"qwen3-8b\"}";
    String reasoning =
        "pallas_llm_tokens_total{agent=\"oa\",kind=\"reasoning\",model=\"qwen3-8b\"}";
    Map<String, Double> before = values(turns, input, cached, reasoning);
    openai.then(
        openai.toolCall("call_1", "tools__echo", "{\"text\":\"from the tool\"}"),
        openai.text("done", 20, 7));
    try (McpSyncClient c = McpClients.connect(fleet.mcpUrl("oa"))) {
      assertThat(text(send(c, "send_message", "hello"))).isEqualTo("done");
    }
    List<FakeLlmServer.Request> requests = openai.chatRequests();
    assertThat(requests).hasSize(2);
    FakeLlmServer.Request first = requests.get(0);
    assertThat(first.header("Authorization")).isEqualTo("Bearer " + OPENAI_KEY);
    JsonNode body = first.body();
    assertThat(body.get("model").asText()).isEqualTo("qwen3-8b");
    assertThat(body.get("temperature").asDouble()).isEqualTo(0.5);
    assertThat(body.get("top_p").asDouble()).isEqualTo(0.9);
    assertThat(body.get("top_k").asInt()).isEqualTo(40);
    assertThat(FakeLlmServer.roles(first)).containsExactly("system", "user");
    JsonNode tool = body.get("tools").get(0).get("function");
    assertThat(tool.get("name").asText()).isEqualTo("tools__echo");
    assertThat(tool.at("/parameters/properties/text/type").asText()).isEqualTo("string");
    JsonNode second = requests.get(1).body();
    assertThat(FakeLlmServer.roles(requests.get(1)))
        .containsExactly("system", "user", "assistant", "tool");
    JsonNode toolMessage = second.get("messages").get(3);
    assertThat(toolMessage.get("tool_call_id").asText()).isEqualTo("call_1");
    assertThat(toolMessage.get("content").asText()).isEqualTo("from the tool");
    Map<String, Double> after = values(turns, input, cached, reasoning);
    assertThat(after.get(turns) - before.get(turns)).isEqualTo(2.0);
    assertThat(after.get(input) - before.get(input)).as("10 + 20 input tokens").isEqualTo(30.0);
    assertThat(after.get(cached) - before.get(cached)).isEqualTo(6.0);
    assertThat(after.get(reasoning) - before.get(reasoning)).isEqualTo(4.0);
    assertThat(metrics()).doesNotContain(OPENAI_KEY);
  }

  @Test
  void anthropicToolCallRoundTripWithUsageKinds() throws Exception {
    anthropic.then(
        anthropic.toolCall("toolu_1", "tools__echo", "{\"text\":\"echoed\"}"),
        anthropic.text("fine", 12, 3));
    try (McpSyncClient c = McpClients.connect(fleet.mcpUrl("an"))) {
      assertThat(text(send(c, "an", "hi"))).isEqualTo("fine");
    }
    List<FakeLlmServer.Request> requests = anthropic.chatRequests();
    assertThat(requests).hasSize(2);
    assertThat(requests.get(0).header("x-api-key")).isEqualTo(ANTHROPIC_KEY);
    JsonNode first = requests.get(0).body();
    assertThat(first.get("model").asText()).isEqualTo("claude-sonnet-4-5");
    assertThat(first.get("temperature").asDouble()).isEqualTo(0.5);
    assertThat(first.get("top_k").asInt()).isEqualTo(40);
    assertThat(first.toString()).contains("You are terse.");
    assertThat(first.get("tools").get(0).get("name").asText()).isEqualTo("tools__echo");
    assertThat(first.get("tools").get(0).at("/input_schema/properties/text/type").asText())
        .isEqualTo("string");
    JsonNode toolResult = requests.get(1).body().get("messages").get(2).get("content").get(0);
    assertThat(toolResult.get("type").asText()).isEqualTo("tool_result");
    assertThat(toolResult.get("tool_use_id").asText()).isEqualTo("toolu_1");
    assertThat(toolResult.toString()).contains("echoed");
    assertThat(metrics())
        .contains(
            "pallas_llm_tokens_total{agent=\"an\",kind=\"cache_read\",model=\"claude-sonnet-4-5\"} 12.0")
        .contains(
            "pallas_llm_tokens_total{agent=\"an\",kind=\"cache_write\",model=\"claude-sonnet-4-5\"} 8.0");
  }

  @Test
  void opus47NeverReceivesSamplingParameters() {
    anthropic.then(anthropic.text("ok", 1, 1));
    try (McpSyncClient c = McpClients.connect(fleet.mcpUrl("opus"))) {
      assertThat(text(send(c, "send_message", "hi"))).isEqualTo("ok");
    }
    JsonNode body = anthropic.chatRequests().get(0).body();
    assertThat(body.has("temperature")).isFalse();
    assertThat(body.has("top_p")).isFalse();
    assertThat(body.has("top_k")).isFalse();
  }

  @Test
  void transientFailuresAreRetriedAndPersistentOnesGiveAClearError() {
    try (McpSyncClient c = McpClients.connect(fleet.mcpUrl("oa"))) {
      openai.then(
          FakeLlmServer.status(429), FakeLlmServer.status(503), openai.text("recovered", 1, 1));
      assertThat(text(send(c, "send_message", "x"))).isEqualTo("recovered");
      assertThat(openai.chatRequests()).hasSize(3);

      openai.reset();
      openai.then(FakeLlmServer.status(500), FakeLlmServer.status(500), FakeLlmServer.status(500));
      McpSchema.CallToolResult failed = send(c, "send_message", "x");
      assertThat(failed.isError()).isTrue();
      assertThat(text(failed))
          .isEqualTo("The model openai.qwen3-8b failed: openai.qwen3-8b: HTTP 500");
      assertThat(openai.chatRequests()).hasSize(3);

      openai.reset();
      openai.then(FakeLlmServer.status(400));
      McpSchema.CallToolResult rejected = send(c, "send_message", "x");
      assertThat(text(rejected)).endsWith("HTTP 400");
      assertThat(openai.chatRequests()).as("a 4xx is not retried").hasSize(1);

      openai.reset();
      openai.then(FakeLlmServer.garbage(), FakeLlmServer.garbage(), FakeLlmServer.garbage());
      McpSchema.CallToolResult garbage = send(c, "send_message", "x");
      assertThat(garbage.isError()).isTrue();
      assertThat(text(garbage))
          .startsWith("The model openai.qwen3-8b failed:")
          .doesNotContain(OPENAI_KEY);

      openai.reset();
      openai.then(
          FakeLlmServer.delayed(4000, openai.text("late", 1, 1)),
          FakeLlmServer.delayed(4000, openai.text("late", 1, 1)),
          FakeLlmServer.delayed(4000, openai.text("late", 1, 1)));
      McpSchema.CallToolResult slow = send(c, "send_message", "x");
      assertThat(text(slow)).endsWith("no complete answer within the LLM request timeout of 2 s");
    }
    assertThat(metrics()).contains("pallas_send_message_total{agent=\"oa\",outcome=\"error\"}");
  }

  @Test
  void aModelThatNeverStopsCallingToolsIsStoppedAtMaxIterations() {
    openai.otherwise(() -> openai.toolCall("call_x", "tools__echo", "{\"text\":\"again\"}"));
    try (McpSyncClient c = McpClients.connect(fleet.mcpUrl("oa"))) {
      McpSchema.CallToolResult r = send(c, "send_message", "loop");
      assertThat(r.isError()).isTrue();
      assertThat(text(r)).contains("maxIterations (3)");
      assertThat(openai.chatRequests()).hasSize(3);
    } finally {
      openai.otherwise(() -> openai.text("default answer", 1, 1));
    }
  }

  @Test
  void preflightFailureShowsInHealthAndMetricsWithoutBlockingStartup() throws Exception {
    try (McpSyncClient c = McpClients.connect(fleet.mcpUrl("missing"))) {
      JsonNode health =
          JSON.readTree(text(c.callTool(new McpSchema.CallToolRequest("get_health", Map.of()))));
      assertThat(health.get("status").asText()).isEqualTo("degraded");
      assertThat(health.get("message").asText())
          .isEqualTo("LLM: openai: model 'not-served' not found");
    }
    try (McpSyncClient c = McpClients.connect(fleet.mcpUrl("an"))) {
      JsonNode health =
          JSON.readTree(text(c.callTool(new McpSchema.CallToolRequest("get_health", Map.of()))));
      assertThat(health.get("status").asText()).isEqualTo("ok");
    }
    assertThat(metrics()).contains("pallas_llm_provider_up{provider=\"anthropic\"} 1.0");
  }

  private static Map<String, Double> values(String... series) {
    Map<String, Double> out = new HashMap<>();
    String text = metrics();
    for (String name : series) {
      out.put(name, 0.0);
      for (String line : text.split("\n")) {
        if (line.startsWith(name + " ")) {
          out.put(name, Double.parseDouble(line.substring(name.length() + 1)));
        }
      }
    }
    return out;
  }

  @Test
  void toolCallsOfOneTurnRunInParallelUnlessDisabled() {
    List<String[]> two =
        List.of(
            new String[] {"call_a", "tools__rendezvous", "{}"},
            new String[] {"call_b", "tools__rendezvous", "{}"});
    openai.then(openai.toolCalls(two), openai.text("both back", 1, 1));
    try (McpSyncClient c = McpClients.connect(fleet.mcpUrl("oa"))) {
      assertThat(text(send(c, "send_message", "go"))).isEqualTo("both back");
    }
    JsonNode results = openai.chatRequests().get(1).body().get("messages");
    assertThat(results.get(3).get("content").asText()).isEqualTo("met");
    assertThat(results.get(4).get("content").asText()).isEqualTo("met");

    openai.reset();
    openai.then(openai.toolCalls(two), openai.text("both back", 1, 1));
    try (McpSyncClient c = McpClients.connect(fleet.mcpUrl("serial"))) {
      assertThat(text(send(c, "send_message", "go"))).isEqualTo("both back");
    }
    List<String> serial = new ArrayList<>();
    openai
        .chatRequests()
        .get(1)
        .body()
        .get("messages")
        .forEach(m -> {
          if (m.get("role").asText().equals("tool")) {
            serial.add(m.get("content").asText());
          }
        });
    assertThat(serial).as("one at a time, each waits alone").containsExactly("alone", "alone");
  }

  @Test
  void anAgentWithoutItsKeyStartsAndSaysErrorWithoutLeakingAnything() throws Exception {
    try (RunningFleet keyless =
            RunningFleet.start(
                """
                apiVersion: pallas.helu.ca/v1alpha1
                kind: PallasDeployment
                metadata: {name: keyless}
                spec:
                  registry: {port: ${port:registry}}
                  providers: {anthropic: {baseUrl: "%s", apiKey: {env: NOT_SET_ANYWHERE}}}
                  agents: [{name: k, port: ${port:k}, model: anthropic.claude-sonnet-4-5}]
                """
                    .formatted(anthropic.baseUrl()));
        McpSyncClient c = McpClients.connect(keyless.mcpUrl("k"))) {
      JsonNode health =
          JSON.readTree(text(c.callTool(new McpSchema.CallToolRequest("get_health", Map.of()))));
      assertThat(health.get("status").asText()).isEqualTo("error");
      assertThat(health.get("message").asText())
          .isEqualTo("no API key for anthropic: set environment variable NOT_SET_ANYWHERE");
      McpSchema.CallToolResult r = send(c, "send_message", "hi");
      assertThat(r.isError()).isTrue();
      assertThat(text(r)).contains("no API key for anthropic");
    }
  }

  @Test
  void imagesReachAVisionModelInTheProvidersFormat() throws Exception {
    try (FakeLlmServer vision = FakeLlmServer.openAi("qwen-vl");
        RunningFleet withVision =
            RunningFleet.start(
                """
                apiVersion: pallas.helu.ca/v1alpha1
                kind: PallasDeployment
                metadata: {name: vision}
                spec:
                  registry: {port: ${port:registry}}
                  modelCapabilities: {vision: true}
                  providers: {openai: {baseUrl: "%s", apiKey: {value: k}}}
                  agents: [{name: eyes, port: ${port:eyes}, model: openai.qwen-vl}]
                """
                    .formatted(vision.baseUrl()));
        McpSyncClient c = McpClients.connect(withVision.mcpUrl("eyes"))) {
      vision.then(vision.text("a red pixel", 5, 3));
      String png = Base64.getEncoder().encodeToString(new byte[] {(byte) 0x89, 'P', 'N', 'G'});
      McpSchema.CallToolResult r =
          c.callTool(
              new McpSchema.CallToolRequest(
                  "send_message",
                  Map.of(
                      "message",
                      "what is this?",
                      "images",
                      List.of(Map.of("data", png, "mime_type", "image/png")))));
      assertThat(text(r)).isEqualTo("a red pixel");
      JsonNode content = vision.chatRequests().get(0).body().get("messages").get(0).get("content");
      assertThat(content.toString())
          .contains("what is this?")
          .contains("data:image/png;base64," + png);
    }
  }

  private static String metrics() {
    try {
      return HttpClient.newHttpClient()
          .send(
              HttpRequest.newBuilder(URI.create(fleet.registryBase() + "/metrics")).build(),
              HttpResponse.BodyHandlers.ofString())
          .body();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
