package ca.helu.pallas.runtime.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.runtime.serve.DefaultAgentParts;
import ca.helu.pallas.runtime.testing.McpClients;
import ca.helu.pallas.runtime.testing.RunningFleet;
import ca.helu.pallas.runtime.testing.ServerEverything;
import ca.helu.pallas.runtime.testing.TestMcpServer;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The registry's MCP endpoint (docs/contract.md, "The registry's MCP endpoint"; issue 20 §1, §2): a
 * fleet of two agents calling a Java SDK server and the reference server from npm, through the
 * SDK's client at the registry's /mcp.
 */
class RegistryMcpIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static TestMcpServer tools;
  private static ServerEverything everything;
  private static RunningFleet fleet;

  @BeforeAll
  static void start() throws Exception {
    tools = TestMcpServer.start();
    everything = ServerEverything.start();
    DefaultAgentParts.Timings timings =
        DefaultAgentParts.Timings.DEFAULT.withHealthInterval(Duration.ofMillis(300));
    fleet =
        RunningFleet.start(
            """
            apiVersion: pallas.helu.ca/v1alpha1
            kind: PallasDeployment
            metadata: {name: found}
            spec:
              registry: {port: ${port:registry}}
              defaultModel: passthrough
              mcpServers:
                - {name: tools, url: "%s"}
                - {name: everything, url: "%s"}
              agents:
                - {name: alpha, port: ${port:alpha}, description: Plans trips and books hotels,
                   servers: [tools, everything]}
                - {name: beta, port: ${port:beta}, description: Answers questions about invoices,
                   servers: [everything, alpha]}
            """
                .formatted(tools.url(), everything.url()),
            Map.of(),
            timings);
  }

  @AfterAll
  static void stop() {
    if (fleet != null) {
      fleet.close();
    }
    if (everything != null) {
      everything.close();
    }
    if (tools != null) {
      tools.close();
    }
  }

  private static String registryMcp() {
    return fleet.registryBase() + "/mcp";
  }

  private static JsonNode structured(McpSchema.CallToolResult result) {
    assertThat(result.isError()).as(McpClients.text(result)).isNotEqualTo(Boolean.TRUE);
    return JSON.valueToTree(result.structuredContent());
  }

  private static JsonNode find(McpSyncClient client, Map<String, Object> args) {
    return structured(client.callTool(new McpSchema.CallToolRequest("find_tools", args)));
  }

  @Test
  void findsAToolByIntentAcrossAgentsAndServersAndCallsIt() throws Exception {
    try (McpSyncClient client = McpClients.connect(registryMcp())) {
      assertThat(client.listTools().tools())
          .extracting(McpSchema.Tool::name)
          .containsExactlyInAnyOrder("find_tools", "get_schema", "call_tool", "list_servers");

      JsonNode found =
          find(
              client,
              Map.of(
                  "queries",
                  List.of("the sum of two numbers", "book a hotel for my trip", "echo text")));
      JsonNode results = found.get("results");
      assertThat(results).hasSize(3);
      assertThat(results.get(0).get("hits").get(0).get("name").asText())
          .isEqualTo("everything/get-sum");
      assertThat(results.get(0).get("hits").get(0).get("server").asText()).isEqualTo("everything");
      assertThat(results.get(1).get("hits").get(0).get("agent").asText()).isEqualTo("alpha");
      List<String> echoes = new ArrayList<>();
      results.get(2).get("hits").forEach(h -> echoes.add(h.get("name").asText()));
      assertThat(echoes).contains("tools/echo", "everything/echo");
      // the server both agents call is indexed once
      assertThat(found.get("indexedTools").asInt()).isEqualTo(countTools(client));

      JsonNode schema =
          structured(
              client.callTool(
                  new McpSchema.CallToolRequest(
                      "get_schema", Map.of("name", "everything/get-sum"))));
      assertThat(schema.at("/tool/inputSchema/properties/a/type").asText()).isEqualTo("number");

      McpSchema.CallToolResult sum =
          client.callTool(
              new McpSchema.CallToolRequest(
                  "call_tool",
                  Map.of("name", "everything/get-sum", "arguments", Map.of("a", 2, "b", 40))));
      assertThat(sum.isError()).isNotEqualTo(Boolean.TRUE);
      assertThat(McpClients.text(sum)).contains("42");

      McpSchema.CallToolResult echo =
          client.callTool(
              new McpSchema.CallToolRequest(
                  "call_tool",
                  Map.of(
                      "name", "tools/echo", "arguments", Map.of("text", "through the registry"))));
      assertThat(McpClients.text(echo)).isEqualTo("through the registry");

      McpSchema.CallToolResult agent =
          client.callTool(
              new McpSchema.CallToolRequest(
                  "call_tool",
                  Map.of(
                      "name",
                      "beta/send_message",
                      "arguments",
                      Map.of("message", "***FIXED_RESPONSE hello from beta"))));
      assertThat(McpClients.text(agent)).isEqualTo("hello from beta");

      McpSchema.CallToolResult unknown =
          client.callTool(
              new McpSchema.CallToolRequest("call_tool", Map.of("name", "nobody/nothing")));
      assertThat(unknown.isError()).isTrue();
      assertThat(McpClients.text(unknown)).contains("no tool named 'nobody/nothing'");

      String metrics = fleet.metrics().scrape();
      assertThat(metrics)
          .contains(
              "pallas_registry_tool_calls_total{outcome=\"ok\",server=\"everything\",tool=\"get-sum\"} 1.0")
          .contains(
              "pallas_registry_tool_calls_total{outcome=\"ok\",server=\"tools\",tool=\"echo\"} 1.0")
          .contains(
              "pallas_registry_tool_call_duration_seconds_count{server=\"beta\",tool=\"send_message\"} 1");
    }
  }

  private static int countTools(McpSyncClient client) {
    JsonNode servers =
        structured(client.callTool(new McpSchema.CallToolRequest("list_servers", Map.of())));
    int n = 0;
    for (JsonNode s : servers.get("servers")) {
      n += s.get("tools").asInt();
    }
    return n;
  }

  @Test
  void progressOfACallIsRelayed() {
    List<McpSchema.ProgressNotification> progress = new CopyOnWriteArrayList<>();
    try (McpSyncClient client = McpClients.connect(registryMcp(), null, progress::add)) {
      McpSchema.CallToolResult result =
          client.callTool(
              McpSchema.CallToolRequest.builder()
                  .name("call_tool")
                  .arguments(
                      Map.of(
                          "name",
                          "everything/trigger-long-running-operation",
                          "arguments",
                          Map.of("duration", 1, "steps", 3)))
                  .progressToken("relayed")
                  .build());
      assertThat(result.isError()).as(McpClients.text(result)).isNotEqualTo(Boolean.TRUE);
      List<McpSchema.ProgressNotification> mine = McpClients.progressOf(progress, "relayed");
      assertThat(mine).hasSizeGreaterThanOrEqualTo(3);
      for (int i = 1; i < mine.size(); i++) {
        assertThat(mine.get(i).progress()).isGreaterThan(mine.get(i - 1).progress());
      }
    }
  }

  @Test
  void listsEveryAgentAndServerWithHealthAndLatency() {
    try (McpSyncClient client = McpClients.connect(registryMcp())) {
      await()
          .atMost(Duration.ofSeconds(10))
          .untilAsserted(() -> {
            JsonNode servers =
                structured(client.callTool(new McpSchema.CallToolRequest("list_servers", Map.of())))
                    .get("servers");
            List<String> names = new ArrayList<>();
            servers.forEach(s -> names.add(s.get("kind").asText() + ":" + s.get("name").asText()));
            assertThat(names)
                .containsExactly("agent:alpha", "agent:beta", "server:tools", "server:everything");
            for (JsonNode s : servers) {
              assertThat(s.get("latencyMs").asDouble()).as(s.toString()).isPositive();
              assertThat(s.get("checkedAt").asText()).as(s.toString()).isNotEmpty();
            }
            assertThat(servers.get(0).get("status").asText()).isEqualTo("ok");
            assertThat(servers.get(3).get("status").asText()).isEqualTo("up");
            assertThat(servers.get(3).get("usedBy").toString()).isEqualTo("[\"alpha\",\"beta\"]");
          });
    }
  }

  @Test
  void aServersNewToolIsFoundOnceItSaysItsToolsChanged() {
    try (McpSyncClient client = McpClients.connect(registryMcp())) {
      // the index is built: the new tool's words match nothing yet
      assertThat(find(client, Map.of("query", "weather forecast tomorrow")).at("/results/0/hits"))
          .isEmpty();
      tools.addTool("forecast", "The weather forecast for tomorrow", "sunny");
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() ->
              find(client, Map.of("query", "weather forecast tomorrow"))
                  .at("/results/0/hits/0/name")
                  .asText()
                  .equals("tools/forecast"));
    }
  }

  @Test
  void badArgumentsAreErrorsNamingTheProblem() {
    try (McpSyncClient client = McpClients.connect(registryMcp())) {
      McpSchema.CallToolResult none =
          client.callTool(new McpSchema.CallToolRequest("find_tools", Map.of()));
      assertThat(none.isError()).isTrue();
      assertThat(McpClients.text(none)).contains("needs a query");
      McpSchema.CallToolResult limit =
          client.callTool(
              new McpSchema.CallToolRequest("find_tools", Map.of("query", "x", "limit", 500)));
      assertThat(McpClients.text(limit)).contains("limit must be a whole number from 1 to 50");
      McpSchema.CallToolResult schema =
          client.callTool(new McpSchema.CallToolRequest("get_schema", Map.of("name", 3)));
      assertThat(McpClients.text(schema)).contains("get_schema needs name");
    }
  }

  /** Seed 002 through the registry: one subscription per agent watches the fleet. */
  @Test
  void aSubscriberToAnAgentsHealthAtTheRegistryHearsWhenItsServerBreaks() throws Exception {
    try (TestMcpServer breaking = TestMcpServer.start();
        RunningFleet watched =
            RunningFleet.start(
                """
                apiVersion: pallas.helu.ca/v1alpha1
                kind: PallasDeployment
                metadata: {name: watched}
                spec:
                  registry: {port: ${port:registry}}
                  defaultModel: passthrough
                  mcpServers: [{name: breaking, url: "%s"}]
                  agents:
                    - {name: gamma, port: ${port:gamma}, servers: [breaking]}
                """
                    .formatted(breaking.url()),
                Map.of(),
                DefaultAgentParts.Timings.DEFAULT.withHealthInterval(Duration.ofMillis(200)))) {
      String uri = "pallas://agents/gamma/health";
      List<String> updates = new CopyOnWriteArrayList<>();
      List<Long> at = new CopyOnWriteArrayList<>();
      try (McpSyncClient client =
          McpClients.watching(
              watched.registryBase() + "/mcp",
              contents ->
                  contents.forEach(c -> {
                    if (c.uri().equals(uri)) {
                      at.add(System.nanoTime());
                      updates.add(((McpSchema.TextResourceContents) c).text());
                    }
                  }))) {
        assertThat(client.getServerCapabilities().resources().subscribe()).isTrue();
        assertThat(client.listResources().resources())
            .extracting(McpSchema.Resource::uri)
            .containsExactly(uri);
        await()
            .atMost(Duration.ofSeconds(5))
            .until(() -> status(McpClients.resourceText(client, uri)).equals("ok"));
        client.subscribeResource(new McpSchema.SubscribeRequest(uri));
        // a URI the registry has no resource of is refused, not kept as a subscription
        assertThatThrownBy(() ->
                client.subscribeResource(
                    new McpSchema.SubscribeRequest("pallas://agents/nobody/health")))
            .isInstanceOf(McpError.class)
            .hasMessageContaining("Resource not found");
        long broken = System.nanoTime();
        breaking.kill();
        await()
            .atMost(Duration.ofSeconds(5))
            .until(() -> updates.stream().anyMatch(u -> u.contains("degraded")));
        int index = 0;
        while (!updates.get(index).contains("degraded")) {
          index++;
        }
        System.out.println(
            "registry health notification "
                + Duration.ofNanos(at.get(index) - broken).toMillis()
                + " ms after the server broke");
        JsonNode now = JSON.readTree(updates.get(index));
        assertThat(now.get("message").asText()).startsWith("Unreachable: breaking");
      }
    }
  }

  private static String status(String json) throws Exception {
    return JSON.readTree(json).get("status").asText();
  }
}
