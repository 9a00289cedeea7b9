package ca.helu.pallas.runtime.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.runtime.serve.DefaultAgentParts;
import ca.helu.pallas.runtime.testing.McpClients;
import ca.helu.pallas.runtime.testing.RunningFleet;
import ca.helu.pallas.runtime.testing.TestMcpServer;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * An agent's health as an MCP resource (docs/contract.md, "Resources"; issue 20 §2): read as
 * get_health answers, and pushed to subscribers when it changes, through the SDK's client.
 */
class HealthResourceIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String URI = "pallas://agents/watched/health";

  /** An update as the subscriber got it: when, and what it read again on hearing of it. */
  private record Update(long at, String text) {}

  @Test
  void aSubscriberIsToldWithinASecondWhenADownstreamServerBreaksOthersAreNot() throws Exception {
    try (TestMcpServer tools = TestMcpServer.start();
        RunningFleet fleet = watching(tools)) {
      List<Update> subscribed = new CopyOnWriteArrayList<>();
      List<Update> unsubscribed = new CopyOnWriteArrayList<>();
      List<Update> never = new CopyOnWriteArrayList<>();
      try (McpSyncClient a = McpClients.watching(fleet.mcpUrl("watched"), record(subscribed));
          McpSyncClient b = McpClients.watching(fleet.mcpUrl("watched"), record(unsubscribed));
          McpSyncClient c = McpClients.watching(fleet.mcpUrl("watched"), record(never))) {
        assertThat(a.getServerCapabilities().resources().subscribe()).isTrue();
        assertThat(a.listResources().resources()).extracting(McpSchema.Resource::uri).contains(URI);
        // the resource is get_health's JSON (its timestamp aside: they may be a second apart)
        await()
            .atMost(Duration.ofSeconds(5))
            .until(() -> status(read(a)).equals("ok") && tools.deletes() > 0);
        JsonNode resource = JSON.readTree(read(a));
        JsonNode tool =
            JSON.readTree(
                McpClients.text(a.callTool(new McpSchema.CallToolRequest("get_health", Map.of()))));
        assertThat(withoutTimestamp(resource)).isEqualTo(withoutTimestamp(tool));
        assertThat(resource.get("timestamp").asText())
            .matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ");

        a.subscribeResource(new McpSchema.SubscribeRequest(URI));
        b.subscribeResource(new McpSchema.SubscribeRequest(URI));
        b.unsubscribeResource(new McpSchema.UnsubscribeRequest(URI));

        long broken = System.nanoTime();
        tools.kill();
        await().atMost(Duration.ofSeconds(5)).until(() -> !subscribed.isEmpty());
        Update update = subscribed.get(0);
        long millis = Duration.ofNanos(update.at() - broken).toMillis();
        System.out.println("health notification " + millis + " ms after the server broke");
        assertThat(millis).as("from the break to the subscriber's update").isLessThan(1000);
        JsonNode now = JSON.readTree(update.text());
        assertThat(now.get("status").asText()).isEqualTo("degraded");
        assertThat(now.get("message").asText()).startsWith("Unreachable: tools");
        assertThat(status(read(a))).isEqualTo("degraded");

        await()
            .during(Duration.ofMillis(600))
            .atMost(Duration.ofSeconds(2))
            .until(() -> unsubscribed.isEmpty() && never.isEmpty());
      }
    }
  }

  /**
   * The agent's health gauge follows its checks, not only get_health calls: with no client at all,
   * a broken server shows in pallas_agent_health_status (docs/metrics.md).
   */
  @Test
  void theHealthGaugeFollowsTheChecksWithoutAnyClient() throws Exception {
    try (TestMcpServer tools = TestMcpServer.start();
        RunningFleet fleet = watching(tools)) {
      String gauge = "pallas_agent_health_status{agent=\"watched\"}";
      await()
          .atMost(Duration.ofSeconds(5))
          .until(() -> fleet.metrics().scrape().contains(gauge + " 1.0"));
      tools.kill();
      await()
          .atMost(Duration.ofSeconds(5))
          .until(() -> fleet.metrics().scrape().contains(gauge + " 0.5"));
    }
  }

  /** A fleet whose agent probes its server every 200 ms: a break is seen at once. */
  private static RunningFleet watching(TestMcpServer tools) {
    DefaultAgentParts.Timings timings =
        DefaultAgentParts.Timings.DEFAULT.withHealthInterval(Duration.ofMillis(200));
    return RunningFleet.start(
        """
        apiVersion: pallas.helu.ca/v1alpha1
        kind: PallasDeployment
        metadata: {name: watch}
        spec:
          registry: {port: ${port:registry}}
          defaultModel: passthrough
          mcpServers: [{name: tools, url: "%s"}]
          agents:
            - {name: watched, port: ${port:watched}, servers: [tools]}
        """
            .formatted(tools.url()),
        Map.of(),
        timings);
  }

  private static java.util.function.Consumer<List<McpSchema.ResourceContents>> record(
      List<Update> into) {
    return contents -> {
      for (McpSchema.ResourceContents content : contents) {
        if (content.uri().equals(URI)) {
          into.add(
              new Update(System.nanoTime(), ((McpSchema.TextResourceContents) content).text()));
        }
      }
    };
  }

  private static String read(McpSyncClient client) {
    McpSchema.ReadResourceResult result =
        client.readResource(new McpSchema.ReadResourceRequest(URI));
    McpSchema.TextResourceContents contents =
        (McpSchema.TextResourceContents) result.contents().get(0);
    assertThat(contents.mimeType()).isEqualTo("application/json");
    return contents.text();
  }

  private static String status(String json) throws Exception {
    return JSON.readTree(json).get("status").asText();
  }

  private static JsonNode withoutTimestamp(JsonNode health) {
    ObjectNode copy = health.deepCopy();
    copy.remove("timestamp");
    return copy;
  }
}
