package ca.helu.pallas.runtime.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.runtime.llm.Retry;
import ca.helu.pallas.runtime.serve.DefaultAgentParts;
import ca.helu.pallas.runtime.store.PostgresStore;
import ca.helu.pallas.runtime.store.StoreConfig;
import ca.helu.pallas.runtime.testing.McpClients;
import ca.helu.pallas.runtime.testing.PostgresServer;
import ca.helu.pallas.runtime.testing.RunningFleet;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The store stopped under running agents, then started again (issue 17 §4): the agents stay up;
 * get_health says degraded naming the store (never its password); pallas_store_up is 0; a request
 * scope call is served; calls that need a history get a clear tool error within the store's
 * timeout, the history prompt a JSON-RPC error; a turn under way when the store went is not stored
 * by half; once the store is back, everything works again without a restart.
 */
class StoreOutageIT {
  @RegisterExtension static final PostgresServer PG = new PostgresServer();
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Executor CALLER = Executors.newVirtualThreadPerTaskExecutor();

  private static final DefaultAgentParts.Timings TIMINGS =
      new DefaultAgentParts.Timings(
          Duration.ofMillis(2000),
          Duration.ofSeconds(15),
          Duration.ofSeconds(3),
          Duration.ofMinutes(5),
          Duration.ofMinutes(1),
          new Retry(1, Duration.ofMillis(20), Duration.ofSeconds(60)));

  @Test
  void agentsOutliveAStoreOutageAndRecoverWithoutARestart() throws Exception {
    String url = PG.newDatabase();
    String described =
        "PostgreSQL 127.0.0.1:" + PG.port() + "/" + url.substring(url.lastIndexOf('/') + 1);
    try (RunningFleet fleet =
            RunningFleet.start(
                """
                apiVersion: pallas.helu.ca/v1alpha1
                kind: PallasDeployment
                metadata: {name: outage}
                spec:
                  registry: {port: ${port:registry}}
                  defaultModel: passthrough
                  agents:
                    - {name: s, port: ${port:s}, instanceScope: shared}
                    - {name: c, port: ${port:c}, instanceScope: connection}
                    - {name: r, port: ${port:r}, instanceScope: request}
                    - {name: w, port: ${port:w}, instanceScope: shared, model: slow}
                """,
                TIMINGS,
                metrics ->
                    new PostgresStore(
                        StoreConfig.of(url, PostgresServer.USER, PostgresServer.PASSWORD)
                            .withTimeout(Duration.ofSeconds(2))
                            .withIntervals(Duration.ofMinutes(1), Duration.ofMillis(300)),
                        "outage",
                        metrics::storeUp));
        McpSyncClient s = McpClients.connect(fleet.mcpUrl("s"));
        McpSyncClient c = McpClients.connect(fleet.mcpUrl("c"));
        McpSyncClient r = McpClients.connect(fleet.mcpUrl("r"));
        McpSyncClient w = McpClients.connect(fleet.mcpUrl("w"))) {
      assertThat(McpClients.send(s, "send_message", "before").isError()).isFalse();
      assertThat(McpClients.send(c, "send_message", "before").isError()).isFalse();
      await().atMost(Duration.ofSeconds(10)).until(() -> storeUp(fleet).equals("1.0"));
      assertThat(health(s).path("status").asText()).isEqualTo("ok");

      // a turn under way when the store stops: its model answers after 2 s, its turn holds the
      // shared conversation's lock on a connection the outage cuts
      CompletableFuture<McpSchema.CallToolResult> underway =
          CompletableFuture.supplyAsync(() -> McpClients.send(w, "send_message", "lost"), CALLER);
      await().atMost(Duration.ofSeconds(10)).until(() -> lockHolders(url) == 1);
      PG.stop();

      McpSchema.CallToolResult cut = underway.get();
      assertThat(cut.isError()).isTrue();
      assertThat(McpClients.text(cut))
          .startsWith("agent 'w' cannot use its conversation history now: " + described)
          .endsWith("this turn was not kept and the conversation is unchanged, retry later");

      await().atMost(Duration.ofSeconds(15)).until(() -> storeUp(fleet).equals("0.0"));
      JsonNode degraded = health(s);
      assertThat(degraded.path("status").asText()).isEqualTo("degraded");
      assertThat(degraded.path("message").asText())
          .startsWith("Conversation store: " + described)
          .doesNotContain(PostgresServer.PASSWORD)
          .doesNotContain(PostgresServer.USER + "\"");
      assertThat(health(r).path("status").asText())
          .as("request scope needs no store")
          .isEqualTo("ok");

      McpSchema.CallToolResult served = McpClients.send(r, "send_message", "no history needed");
      assertThat(served.isError()).isFalse();
      assertThat(McpClients.text(served)).isEqualTo("no history needed");
      // a session opened while the store is down lives in this replica, and on after the outage
      McpSyncClient late = McpClients.connect(fleet.mcpUrl("r"));
      assertThat(McpClients.send(late, "send_message", "opened during").isError()).isFalse();

      long start = System.nanoTime();
      McpSchema.CallToolResult refused = McpClients.send(s, "send_message", "during");
      assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
      assertThat(refused.isError()).isTrue();
      assertThat(McpClients.text(refused))
          .startsWith("agent 's' cannot use its conversation history now: " + described)
          .doesNotContain("Exception", "org.postgresql", "com.zaxxer", PostgresServer.PASSWORD);
      assertThat(McpClients.send(c, "send_message", "during").isError()).isTrue();
      assertThatThrownBy(() -> s.getPrompt(new McpSchema.GetPromptRequest("s_history", Map.of())))
          .isInstanceOf(McpError.class)
          .hasMessageContaining("agent 's' cannot read its conversation history now: " + described);

      PG.start();

      await().atMost(Duration.ofSeconds(15)).until(() -> storeUp(fleet).equals("1.0"));
      assertThat(health(s).path("status").asText()).isEqualTo("ok");
      McpSchema.CallToolResult lateAfter = McpClients.send(late, "send_message", "after it");
      assertThat(lateAfter.isError()).as(McpClients.text(lateAfter)).isFalse();
      assertThat(McpClients.text(lateAfter)).isEqualTo("after it");
      late.close();
      McpSchema.CallToolResult after = McpClients.send(s, "send_message", "after");
      assertThat(after.isError()).isFalse();
      assertThat(history(s, "s_history"))
          .containsExactly("USER:before", "ASSISTANT:before", "USER:after", "ASSISTANT:after");
      assertThat(history(c, "c_history")).containsExactly("USER:before", "ASSISTANT:before");
      // the turn cut by the outage left nothing
      assertThat(history(w, "w_history")).isEmpty();
      assertThat(McpClients.send(w, "send_message", "again").isError()).isFalse();
      assertThat(history(w, "w_history")).containsExactly("USER:again", "ASSISTANT:again");
    }
  }

  private static JsonNode health(McpSyncClient client) throws Exception {
    McpSchema.CallToolResult result =
        client.callTool(new McpSchema.CallToolRequest("get_health", Map.of()));
    return JSON.readTree(McpClients.text(result));
  }

  private static String storeUp(RunningFleet fleet) {
    for (String line : fleet.metrics().scrape().split("\n")) {
      if (line.startsWith("pallas_store_up ")) {
        return line.substring("pallas_store_up ".length());
      }
    }
    return "absent";
  }

  private static long lockHolders(String url) throws Exception {
    try (var conn =
            java.sql.DriverManager.getConnection(
                url, PostgresServer.USER, PostgresServer.PASSWORD);
        var st = conn.createStatement();
        var rows =
            st.executeQuery(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted")) {
      rows.next();
      return rows.getLong(1);
    }
  }

  private static List<String> history(McpSyncClient client, String prompt) {
    return client.getPrompt(new McpSchema.GetPromptRequest(prompt, Map.of())).messages().stream()
        .map(m -> m.role() + ":" + ((McpSchema.TextContent) m.content()).text())
        .toList();
  }
}
