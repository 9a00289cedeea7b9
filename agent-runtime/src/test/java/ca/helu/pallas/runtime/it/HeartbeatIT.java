package ca.helu.pallas.runtime.it;

import static ca.helu.pallas.runtime.testing.McpClients.text;
import static org.assertj.core.api.Assertions.assertThat;

import ca.helu.pallas.runtime.mcp.TurnLimits;
import ca.helu.pallas.runtime.testing.FakeLlmServer;
import ca.helu.pallas.runtime.testing.McpClients;
import ca.helu.pallas.runtime.testing.RawMcp;
import ca.helu.pallas.runtime.testing.RunningFleet;
import ca.helu.pallas.runtime.testing.TestMcpServer;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The heartbeat on a call's stream (docs/runtime.md, "Deadlines and cancellation") is SSE comment
 * lines written between the SDK's events, never inside one: with a heartbeat of a millisecond and a
 * turn sending dozens of progress notifications, every event arrives whole.
 */
class HeartbeatIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final int TOOL_ROUNDS = 12;
  private static FakeLlmServer llm;
  private static TestMcpServer tools;
  private static RunningFleet fleet;

  @BeforeAll
  static void start() throws Exception {
    llm = FakeLlmServer.openAi("m");
    tools = TestMcpServer.start();
    fleet =
        RunningFleet.start(
            """
            apiVersion: pallas.helu.ca/v1alpha1
            kind: PallasDeployment
            metadata: {name: heartbeat}
            spec:
              registry: {port: ${port:registry}}
              providers:
                openai: {baseUrl: "%s"}
              mcpServers: [{name: tools, url: "%s"}]
              agents:
                - name: chatty
                  port: ${port:chatty}
                  model: openai.m
                  servers: [tools]
                  instanceScope: request
            """
                .formatted(llm.baseUrl(), tools.url()),
            options ->
                options.withTurns(new TurnLimits(Duration.ofSeconds(60), Duration.ofMillis(1))));
  }

  @AfterAll
  static void stop() {
    fleet.close();
    tools.close();
    llm.close();
  }

  @BeforeEach
  void script() {
    llm.reset();
    for (int i = 0; i < TOOL_ROUNDS; i++) {
      llm.then(llm.toolCall("call_" + i, "tools__echo", "{\"text\":\"round " + i + "\"}"));
    }
    llm.then(llm.text("all rounds done", 1, 1));
  }

  @Test
  void everyEventArrivesWholeBetweenTheComments() throws Exception {
    RawMcp session = RawMcp.open(fleet.mcpUrl("chatty"), null);
    HttpResponse<String> response =
        session.post(RawMcp.toolCall(5, "send_message", Map.of("message", "go"), "beat"));
    int comments = 0;
    List<JsonNode> events = new ArrayList<>();
    for (String block : response.body().split("\n\n")) {
      if (block.isBlank()) {
        continue;
      }
      if (block.equals(":")) {
        comments++;
        continue;
      }
      List<String> lines = List.of(block.split("\n"));
      assertThat(lines).as(block).hasSize(3);
      assertThat(lines.get(0)).as(block).startsWith("id: ");
      assertThat(lines.get(1)).as(block).isEqualTo("event: message");
      assertThat(lines.get(2)).as(block).startsWith("data: ");
      events.add(JSON.readTree(lines.get(2).substring("data: ".length())));
    }
    assertThat(comments).as("heartbeats written").isPositive();
    // per round: step (llm), step (tool), started, completed; then the last step, the answer's
    // text as the model wrote it (docs/contract.md, "Progress"), then the answer
    List<String> text =
        events.stream()
            .map(e -> e.at("/params/message").asText())
            .filter(m -> m.startsWith("chatty text: "))
            .map(m -> m.substring("chatty text: ".length()))
            .toList();
    assertThat(String.join("", text)).isEqualTo("all rounds done");
    assertThat(events).hasSize(TOOL_ROUNDS * 4 + 2 + text.size());
    assertThat(events.get(events.size() - 1).at("/result/content/0/text").asText())
        .isEqualTo("all rounds done");
  }

  @Test
  void theSdkClientReadsAStreamWithHeartbeats() {
    try (McpSyncClient client = McpClients.connect(fleet.mcpUrl("chatty"))) {
      McpSchema.CallToolResult result = McpClients.send(client, "send_message", "go");
      assertThat(text(result)).isEqualTo("all rounds done");
    }
  }
}
