package ca.helu.pallas.runtime.it;

import static ca.helu.pallas.runtime.testing.McpClients.send;
import static ca.helu.pallas.runtime.testing.McpClients.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.runtime.testing.McpClients;
import ca.helu.pallas.runtime.testing.RunningFleet;
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
import java.util.Arrays;
import java.util.Base64;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The agent's MCP surface (docs/contract.md, docs/runtime.md), driven only through the Java SDK
 * client and HTTP.
 */
class AgentMcpSurfaceIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient HTTP = HttpClient.newHttpClient();
  private static RunningFleet fleet;

  @BeforeAll
  static void start() {
    fleet =
        RunningFleet.start(
            """
            apiVersion: pallas.helu.ca/v1alpha1
            kind: PallasDeployment
            metadata: {name: surface}
            spec:
              registry: {port: ${port:registry}, namespace: ca.helu.test}
              defaultModel: passthrough
              agents:
                - name: helper
                  title: Helper Agent
                  description: Echoes
                  port: ${port:helper}
                  icons: [{src: "https://example.com/helper.svg", sizes: [any], mimeType: image/svg+xml}]
                - name: coordinator
                  port: ${port:coordinator}
                  servers: [helper]
                  instanceScope: connection
                - name: oneshot
                  port: ${port:oneshot}
                  instanceScope: request
                - name: looper
                  port: ${port:looper}
                  servers: [helper]
            """);
  }

  @AfterAll
  static void stop() {
    fleet.close();
  }

  @Test
  void listsTheContractToolsAndHealthIsExactlySeed000() throws Exception {
    try (McpSyncClient client = McpClients.connect(fleet.mcpUrl("helper"))) {
      Map<String, McpSchema.Tool> tools = new HashMap<>();
      client.listTools().tools().forEach(t -> tools.put(t.name(), t));
      assertThat(tools).containsKeys("send_message", "get_health", "helper");
      assertThat((JsonNode) JSON.valueToTree(tools.get("get_health").inputSchema()))
          .isEqualTo(
              JSON.readTree(
                  "{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}"));
      assertThat(tools.get("get_health").description())
          .isEqualTo("Returns the health status of this agent and its downstream dependencies.");

      String turnsBefore = metric("pallas_llm_turns_total{agent=\"helper\",model=\"passthrough\"}");
      McpSchema.CallToolResult health =
          client.callTool(new McpSchema.CallToolRequest("get_health", Map.of()));
      assertThat(health.isError()).isFalse();
      assertThat(health.content()).hasSize(1);
      JsonNode body = JSON.readTree(text(health));
      assertThat(body.get("status").asText()).isEqualTo("ok");
      assertThat(body.get("timestamp").asText())
          .matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ");
      assertThat(body.has("message")).isFalse();
      assertThat(metric("pallas_llm_turns_total{agent=\"helper\",model=\"passthrough\"}"))
          .as("get_health never calls the LLM")
          .isEqualTo(turnsBefore);
      assertThat(metric("pallas_agent_health_status{agent=\"helper\"}")).isEqualTo("1.0");
    }
  }

  @Test
  void toolsCarryAnnotationsOutputSchemaAndTheAgentsIcons() throws Exception {
    try (McpSyncClient client = McpClients.connect(fleet.mcpUrl("helper"))) {
      McpSchema.Implementation info = client.getServerInfo();
      assertThat(info.name()).isEqualTo("helper");
      assertThat(info.title()).isEqualTo("Helper Agent");
      McpSchema.Icon icon =
          McpSchema.Icon.builder("https://example.com/helper.svg")
              .mimeType("image/svg+xml")
              .sizes(List.of("any"))
              .build();
      assertThat(info.icons()).containsExactly(icon);

      Map<String, McpSchema.Tool> tools = new HashMap<>();
      client.listTools().tools().forEach(t -> tools.put(t.name(), t));
      McpSchema.ToolAnnotations health = tools.get("get_health").annotations();
      assertThat(health.readOnlyHint()).isTrue();
      assertThat(health.idempotentHint()).isTrue();
      assertThat(health.destructiveHint()).isFalse();
      assertThat(health.openWorldHint()).isFalse();
      for (String turn : List.of("send_message", "helper")) {
        assertThat(tools.get(turn).annotations().openWorldHint()).as(turn).isTrue();
        assertThat(tools.get(turn).annotations().readOnlyHint()).as(turn).isNull();
      }
      assertThat(tools.values()).allSatisfy(t -> assertThat(t.icons()).containsExactly(icon));
      assertThat((JsonNode) JSON.valueToTree(tools.get("get_health").outputSchema()))
          .isEqualTo(
              JSON.readTree(
                  """
                  {"type":"object","properties":{
                    "status":{"type":"string","enum":["ok","degraded","error"]},
                    "timestamp":{"type":"string","format":"date-time"},
                    "message":{"type":"string",
                               "description":"What is wrong; only when status is not ok"}},
                   "required":["status","timestamp"]}
                  """));
      assertThat(tools.get("send_message").outputSchema()).isNull();

      McpSchema.CallToolResult result =
          client.callTool(new McpSchema.CallToolRequest("get_health", Map.of()));
      assertThat(result.content()).as("the seed's text block stays").hasSize(1);
      assertThat((JsonNode) JSON.valueToTree(result.structuredContent()))
          .isEqualTo(JSON.readTree(text(result)));
      assertThat(JSON.readTree(text(result)).get("status").asText()).isEqualTo("ok");
    }
    try (McpSyncClient client = McpClients.connect(fleet.mcpUrl("oneshot"))) {
      assertThat(client.getServerInfo().icons()).as("an agent without icons").isNull();
      assertThat(client.listTools().tools()).allSatisfy(t -> assertThat(t.icons()).isNull());
    }
  }

  @Test
  void sendMessageAndTheAgentNamedToolBothRunATurn() {
    try (McpSyncClient client = McpClients.connect(fleet.mcpUrl("helper"))) {
      assertThat(text(send(client, "send_message", "hello"))).isEqualTo("hello");
      assertThat(text(send(client, "helper", "***FIXED_RESPONSE fixed answer")))
          .isEqualTo("fixed answer");
    }
  }

  @Test
  void progressFollowsSeed000AndStrictlyIncreases() {
    List<McpSchema.ProgressNotification> seen = McpClients.newProgressLog();
    try (McpSyncClient client = McpClients.connect(fleet.mcpUrl("coordinator"), null, seen::add)) {
      McpSchema.CallToolResult result =
          client.callTool(
              McpSchema.CallToolRequest.builder("coordinator")
                  .arguments(
                      Map.of("message", "***CALL_TOOL helper__helper {\"message\":\"ping\"}"))
                  .progressToken("tok-1")
                  .build());
      assertThat(result.isError()).isFalse();
      assertThat(text(result)).isEqualTo("ping");
      // the SDK client hands notifications to consumers concurrently, so arrival order is not wire
      // order and the last may land just after the result: order by progress value, as Daedalus
      // does, once all six are in
      await()
          .atMost(Duration.ofSeconds(5))
          .until(() -> McpClients.progressOf(seen, "tok-1").size() >= 6);
      List<McpSchema.ProgressNotification> mine =
          McpClients.progressOf(seen, "tok-1").stream()
              .sorted(Comparator.comparing(McpSchema.ProgressNotification::progress))
              .toList();
      assertThat(mine)
          .extracting(McpSchema.ProgressNotification::message)
          .containsExactly(
              "coordinator step 1 (llm)",
              "coordinator step 2 (tool)",
              "helper/helper: started",
              "helper step 1 (llm)", // the helper's own progress, relayed under our token
              "helper/helper: completed",
              "coordinator step 3 (llm)");
      List<Double> values = mine.stream().map(McpSchema.ProgressNotification::progress).toList();
      assertThat(values).as("one value per notification").doesNotHaveDuplicates();
      assertThat(mine.get(4).total()).isEqualTo(mine.get(4).progress());
      assertThat(mine.get(0).total()).isNull();
      assertThat(mine.get(2).total()).isNull();
      assertThat(mine.get(3).total()).isNull();

      seen.clear();
      send(client, "coordinator", "no token, no progress");
      assertThat(seen).isEmpty();
    }
  }

  @Test
  void historyFollowsTheInstanceScope() throws Exception {
    try (McpSyncClient a = McpClients.connect(fleet.mcpUrl("coordinator"));
        McpSyncClient b = McpClients.connect(fleet.mcpUrl("coordinator"))) {
      send(a, "send_message", "from a");
      send(b, "send_message", "from b");
      assertThat(history(a, "coordinator_history"))
          .containsExactly("USER:from a", "ASSISTANT:from a");
      assertThat(history(b, "coordinator_history"))
          .containsExactly("USER:from b", "ASSISTANT:from b");
      // the same as a resource: each session reads its own conversation (issue 20 §2)
      assertThat(historyResource(a, "coordinator"))
          .containsExactly("user:from a", "assistant:from a");
      assertThat(historyResource(b, "coordinator"))
          .containsExactly("user:from b", "assistant:from b");
    }
    try (McpSyncClient a = McpClients.connect(fleet.mcpUrl("oneshot"))) {
      assertThat(a.listPrompts().prompts()).as("request scope keeps no history").isEmpty();
      assertThat(a.listResources().resources())
          .extracting(McpSchema.Resource::uri)
          .containsExactly(
              "pallas://agents/oneshot/health",
              "pallas://agents/oneshot/tools",
              "pallas://agents/oneshot/servers");
      assertThatThrownBy(() -> historyResource(a, "oneshot"))
          .hasMessageContaining("Resource not found")
          .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\tat "));
      assertThat(text(send(a, "send_message", "x"))).isEqualTo("x");
    }
  }

  @Test
  void sharedScopeSerialisesConcurrentCallsWithoutInterleaving() throws Exception {
    int calls = 40;
    try (ExecutorService pool = Executors.newFixedThreadPool(8)) {
      List<Future<String>> results = new ArrayList<>();
      for (int i = 0; i < calls; i++) {
        String message = "shared-" + i;
        results.add(
            pool.submit(() -> {
              try (McpSyncClient c = McpClients.connect(fleet.mcpUrl("helper"))) {
                return text(send(c, "send_message", message));
              }
            }));
      }
      for (int i = 0; i < calls; i++) {
        assertThat(results.get(i).get()).isEqualTo("shared-" + i);
      }
    }
    try (McpSyncClient c = McpClients.connect(fleet.mcpUrl("helper"))) {
      List<String> h =
          history(c, "helper_history").stream().filter(m -> m.contains("shared-")).toList();
      assertThat(h).hasSize(2 * calls);
      for (int i = 0; i < h.size(); i += 2) {
        assertThat(h.get(i)).startsWith("USER:");
        assertThat(h.get(i + 1)).isEqualTo("ASSISTANT:" + h.get(i).substring("USER:".length()));
      }
    }
  }

  @Test
  void badToolInputGetsAClearToolError() throws Exception {
    try (McpSyncClient c = McpClients.connect(fleet.mcpUrl("helper"))) {
      McpSchema.CallToolResult wrongType =
          c.callTool(new McpSchema.CallToolRequest("send_message", Map.of("message", 42)));
      assertThat(wrongType.isError()).isTrue();
      assertThat(text(wrongType))
          .isEqualTo("invalid arguments: argument 'message' must be a string");
      McpSchema.CallToolResult empty = send(c, "send_message", "");
      assertThat(text(empty)).contains("must not be empty");
      String png = Base64.getEncoder().encodeToString(new byte[] {1, 2, 3});
      McpSchema.CallToolResult image =
          c.callTool(
              new McpSchema.CallToolRequest(
                  "send_message",
                  Map.of(
                      "message",
                      "see",
                      "images",
                      List.of(Map.of("data", png, "mime_type", "image/png")))));
      assertThat(text(image)).contains("not vision-capable");
      assertThatThrownBy(() -> c.callTool(new McpSchema.CallToolRequest("no_such_tool", Map.of())))
          .hasMessageContaining("Unknown tool")
          .satisfies(e -> assertThat(e.getMessage()).doesNotContain("Exception", "\tat "));
      assertThatThrownBy(
              () -> c.getPrompt(new McpSchema.GetPromptRequest("no_such_prompt", Map.of())))
          .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\tat "));
    }
    assertThat(metric("pallas_send_message_total{agent=\"helper\",outcome=\"error\"}"))
        .isNotEqualTo("0");
  }

  @Test
  void malformedRequestsAndBadSessionsGetJsonRpcErrorsWithoutStackTraces() throws Exception {
    String sessionId = initializeRaw(fleet.mcpUrl("helper"));
    HttpResponse<String> garbage = post(fleet.mcpUrl("helper"), "{not json", sessionId);
    assertThat(garbage.statusCode()).isBetween(400, 499);
    assertNoStackTrace(garbage.body());

    HttpResponse<String> noSession =
        post(
            fleet.mcpUrl("helper"),
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}",
            null);
    assertThat(noSession.statusCode()).isEqualTo(400);
    assertNoStackTrace(noSession.body());

    HttpResponse<String> stale =
        post(
            fleet.mcpUrl("helper"),
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}",
            "00000000-0000-0000-0000-000000000000");
    assertThat(stale.statusCode()).isEqualTo(404);
    assertNoStackTrace(stale.body());

    HttpResponse<String> unknownMethod =
        post(
            fleet.mcpUrl("helper"),
            "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"no/such\"}",
            sessionId);
    assertThat(unknownMethod.body()).contains("-32601");
    assertNoStackTrace(unknownMethod.body());

    byte[] huge = new byte[70 * 1024 * 1024];
    Arrays.fill(huge, (byte) 'a');
    HttpResponse<String> tooBig =
        HTTP.send(
            HttpRequest.newBuilder(URI.create(fleet.mcpUrl("helper")))
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream")
                .header("Mcp-Session-Id", sessionId)
                .POST(HttpRequest.BodyPublishers.ofByteArray(huge))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(tooBig.statusCode()).isBetween(400, 499);
    assertNoStackTrace(tooBig.body());

    HttpResponse<String> evil =
        HTTP.send(
            HttpRequest.newBuilder(URI.create(fleet.mcpUrl("helper")))
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream")
                .header("Origin", "http://evil.example.com")
                .POST(HttpRequest.BodyPublishers.ofString(INIT))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(evil.statusCode()).as("DNS-rebinding protection").isEqualTo(403);
  }

  @Test
  void probesAndMetricsAreServedOnEveryAgentPortAndTheRegistry() throws Exception {
    assertThat(get(fleet.baseUrl("helper") + "/livez").statusCode()).isEqualTo(200);
    assertThat(get(fleet.baseUrl("helper") + "/readyz").statusCode()).isEqualTo(200);
    assertThat(get(fleet.baseUrl("helper") + "/nope").statusCode()).isEqualTo(404);
    HttpResponse<String> registry = get(fleet.registryBase() + "/.well-known/mcp/server.json");
    assertThat(registry.statusCode()).isEqualTo(200);
    assertThat(registry.headers().firstValue("content-type")).contains("application/json");
    assertThat(JSON.readTree(registry.body()).get("servers")).hasSize(4);
    for (String url :
        List.of(fleet.registryBase() + "/metrics", fleet.baseUrl("coordinator") + "/metrics")) {
      HttpResponse<String> m = get(url);
      assertThat(m.headers().firstValue("content-type").orElse("")).startsWith("text/plain");
      assertThat(m.body()).contains("pallas_up 1.0", "pallas_agent_info{agent=\"looper\"");
    }
  }

  static final String INIT =
      "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\","
          + "\"capabilities\":{},\"clientInfo\":{\"name\":\"raw\",\"version\":\"1\"}}}";

  static String initializeRaw(String url) throws Exception {
    HttpResponse<String> r = post(url, INIT, null);
    assertThat(r.statusCode()).isEqualTo(200);
    String id = r.headers().firstValue("mcp-session-id").orElseThrow();
    post(url, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", id);
    return id;
  }

  static HttpResponse<String> post(String url, String body, String sessionId) throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create(url))
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .POST(HttpRequest.BodyPublishers.ofString(body));
    if (sessionId != null) {
      b.header("Mcp-Session-Id", sessionId);
    }
    return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  static HttpResponse<String> get(String url) throws Exception {
    return HTTP.send(
        HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString());
  }

  private static void assertNoStackTrace(String body) {
    assertThat(body).doesNotContain("\tat ", "at io.", "at java.", "Exception:");
  }

  /** The history resource's messages as role:text. */
  private static List<String> historyResource(McpSyncClient c, String agent) throws Exception {
    String uri = "pallas://agents/" + agent + "/history";
    var contents =
        (McpSchema.TextResourceContents)
            c.readResource(new McpSchema.ReadResourceRequest(uri)).contents().get(0);
    assertThat(contents.mimeType()).isEqualTo("application/json");
    List<String> out = new ArrayList<>();
    for (JsonNode m : JSON.readTree(contents.text()).get("messages")) {
      out.add(m.get("role").asText() + ":" + m.path("content").path("text").asText());
    }
    return out;
  }

  private static List<String> history(McpSyncClient c, String prompt) {
    return c.getPrompt(new McpSchema.GetPromptRequest(prompt, Map.of())).messages().stream()
        .map(m -> m.role() + ":" + ((McpSchema.TextContent) m.content()).text())
        .toList();
  }

  /** The value of one sample line of the registry's /metrics, or "0" when absent. */
  private static String metric(String series) throws Exception {
    for (String line : get(fleet.registryBase() + "/metrics").body().split("\n")) {
      if (line.startsWith(series + " ")) {
        return line.substring(series.length() + 1);
      }
    }
    return "0";
  }
}
