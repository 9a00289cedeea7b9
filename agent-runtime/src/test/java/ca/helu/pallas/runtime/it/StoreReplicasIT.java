package ca.helu.pallas.runtime.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.runtime.auth.StaticTokenFiles;
import ca.helu.pallas.runtime.llm.Retry;
import ca.helu.pallas.runtime.serve.DefaultAgentParts;
import ca.helu.pallas.runtime.store.PostgresStore;
import ca.helu.pallas.runtime.store.StoreConfig;
import ca.helu.pallas.runtime.testing.McpClients;
import ca.helu.pallas.runtime.testing.PostgresServer;
import ca.helu.pallas.runtime.testing.RawMcp;
import ca.helu.pallas.runtime.testing.RunningFleet;
import com.fasterxml.jackson.databind.JsonNode;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two replicas of one agent, each its own runtime with its own store on one PostgreSQL database
 * (issue 17 §1, §2): a shared agent holds one conversation across them, its turns taken one at a
 * time across replicas (a call waiting for the other replica is told so by progress), and a
 * conversation survives the runtime that held it.
 */
class StoreReplicasIT {
  @RegisterExtension static final PostgresServer PG = new PostgresServer();

  private static final String FLEET =
      """
      apiVersion: pallas.helu.ca/v1alpha1
      kind: PallasDeployment
      metadata: {name: replicas}
      spec:
        registry: {port: ${port:registry}}
        defaultModel: slow
        agents:
          - {name: a, port: ${port:a}, instanceScope: shared}
          - {name: c, port: ${port:c}, instanceScope: connection, model: passthrough}
      """;

  private static final DefaultAgentParts.Timings TIMINGS =
      new DefaultAgentParts.Timings(
          Duration.ofMillis(1500),
          Duration.ofSeconds(15),
          Duration.ofSeconds(3),
          Duration.ofMinutes(5),
          Duration.ofMinutes(1),
          new Retry(1, Duration.ofMillis(20), Duration.ofSeconds(60)));

  // not the common pool: the SDK's client answers its calls there, and it may have one thread
  private static final Executor CALLER = Executors.newVirtualThreadPerTaskExecutor();

  private String url;

  @BeforeEach
  void database() throws Exception {
    url = PG.newDatabase();
  }

  private RunningFleet replica() {
    return RunningFleet.start(
        FLEET,
        TIMINGS,
        metrics ->
            new PostgresStore(
                StoreConfig.of(url, PostgresServer.USER, PostgresServer.PASSWORD),
                "replicas",
                metrics::storeUp));
  }

  @Test
  void aSharedAgentHoldsOneConversationAcrossReplicas() throws Exception {
    try (RunningFleet one = replica();
        RunningFleet two = replica();
        McpSyncClient first = McpClients.connect(one.mcpUrl("a"), null, n -> {});
        McpSyncClient second = McpClients.connect(two.mcpUrl("a"), null, n -> {})) {
      List<McpSchema.ProgressNotification> progress = McpClients.newProgressLog();
      try (McpSyncClient watched = McpClients.connect(two.mcpUrl("a"), null, progress::add)) {
        CompletableFuture<McpSchema.CallToolResult> running =
            CompletableFuture.supplyAsync(
                () -> McpClients.send(first, "send_message", "one"), CALLER);
        // the first replica's turn holds the conversation (its model takes 1.5 s)
        await().atMost(Duration.ofSeconds(10)).until(() -> lockHolders() == 1);
        McpSchema.CallToolResult after =
            watched.callTool(
                McpSchema.CallToolRequest.builder("send_message")
                    .arguments(Map.of("message", "two"))
                    .progressToken("t")
                    .build());
        assertThat(running.get().isError()).isFalse();
        assertThat(after.isError()).isFalse();
        await()
            .atMost(Duration.ofSeconds(5))
            .until(() -> !McpClients.progressOf(progress, "t").isEmpty());
        assertThat(McpClients.progressOf(progress, "t").getFirst().message())
            .isEqualTo(
                "a is answering a call of this conversation on another replica first; waiting");
      }
      List<String> expected = List.of("USER:one", "ASSISTANT:one", "USER:two", "ASSISTANT:two");
      assertThat(history(first)).isEqualTo(expected);
      assertThat(history(second)).isEqualTo(expected);
    }
    // and a new runtime on the same database continues it
    try (RunningFleet three = replica();
        McpSyncClient later = McpClients.connect(three.mcpUrl("a"), null, n -> {})) {
      assertThat(history(later)).hasSize(4).startsWith("USER:one");
    }
  }

  /** Sessions holding an advisory lock of Pallas's (a shared conversation's turn). */
  private long lockHolders() throws Exception {
    try (var c =
            java.sql.DriverManager.getConnection(
                url, PostgresServer.USER, PostgresServer.PASSWORD);
        var s = c.createStatement();
        var r =
            s.executeQuery(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted"
                    + " AND database = (SELECT oid FROM pg_database WHERE datname ="
                    + " current_database())")) {
      r.next();
      return r.getLong(1);
    }
  }

  private static List<String> history(McpSyncClient c) {
    return c.getPrompt(new McpSchema.GetPromptRequest("a_history", Map.of())).messages().stream()
        .map(m -> m.role() + ":" + ((McpSchema.TextContent) m.content()).text())
        .toList();
  }

  /**
   * A connection-scope conversation whose session was opened on one replica continues on the other
   * and on a replacement of the first, its history whole (issue 17 §2, §5): the session, and the
   * conversation, live in the database.
   */
  @Test
  void aSessionAndItsConversationAreServedByEveryReplicaAndByAReplacement() throws Exception {
    RunningFleet one = replica();
    RunningFleet two = replica();
    RunningFleet replacement = null;
    try {
      RawMcp onOne = RawMcp.open(one.mcpUrl("c"), null);
      RawMcp onTwo = onOne.at(two.mcpUrl("c"));
      assertThat(RawMcp.text(onOne.callTool("send_message", Map.of("message", "first"))))
          .isEqualTo("first");
      assertThat(RawMcp.text(onTwo.callTool("send_message", Map.of("message", "second"))))
          .isEqualTo("second");
      one.close();
      replacement = replica();
      RawMcp onReplacement = onOne.at(replacement.mcpUrl("c"));
      assertThat(RawMcp.text(onReplacement.callTool("send_message", Map.of("message", "third"))))
          .isEqualTo("third");
      JsonNode history = onReplacement.request("prompts/get", Map.of("name", "c_history"));
      List<String> turns = new java.util.ArrayList<>();
      history.path("messages").forEach(m -> turns.add(m.path("content").path("text").asText()));
      assertThat(turns).containsExactly("first", "first", "second", "second", "third", "third");
      assertThat(storedSessions()).as("one session, in the database").isEqualTo(1);

      assertThat(onTwo.delete()).isEqualTo(200);
      assertThat(storedSessions()).as("deleted on one replica: gone from the database").isZero();
      // a replica holding it notes the end at its next write of a use (at most 5 s on)
      await()
          .atMost(Duration.ofSeconds(15))
          .until(() ->
              onReplacement.post("{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}").statusCode()
                  == 404);
    } finally {
      one.close();
      two.close();
      if (replacement != null) {
        replacement.close();
      }
    }
  }

  /**
   * With inbound authentication, a session is its caller's on every replica (issue 18 §2): the
   * owner is kept with the session, so another caller is refused (404) on a replica that never saw
   * the session, and the first caller with a token claims one opened without, everywhere.
   */
  @Test
  void aSessionIsItsCallersOnEveryReplica(@TempDir Path tokens) throws Exception {
    Files.writeString(tokens.resolve("daedalus"), DAEDALUS);
    Files.writeString(tokens.resolve("argos"), ARGOS);
    String fleet = FLEET.replace("  agents:", "  auth: {staticTokens: {secretName: t}}\n  agents:");
    try (RunningFleet one = replica(fleet, tokens);
        RunningFleet two = replica(fleet, tokens)) {
      RawMcp daedalus = RawMcp.open(one.mcpUrl("c"), DAEDALUS);
      daedalus.callTool("send_message", Map.of("message", "daedalus's plan"));
      RawMcp argosOnTwo = daedalus.at(two.mcpUrl("c")).as(ARGOS);
      assertThat(historyStatus(argosOnTwo)).as("another caller, on another replica").isEqualTo(404);
      assertThat(argosOnTwo.delete()).isEqualTo(404);
      assertThat(pingStatus(daedalus.at(two.mcpUrl("c")).as(null)))
          .as("without a token, where ping is open")
          .isEqualTo(404);
      assertThat(
              daedalus
                  .at(two.mcpUrl("c"))
                  .request("prompts/get", Map.of("name", "c_history"))
                  .toString())
          .contains("daedalus's plan");

      // opened without a token (openHealth), claimed on one replica: the claim holds on the other
      RawMcp anonymous = RawMcp.open(one.mcpUrl("c"), null);
      anonymous.as(ARGOS).callTool("send_message", Map.of("message", "argos's plan"));
      assertThat(historyStatus(anonymous.at(two.mcpUrl("c")).as(DAEDALUS))).isEqualTo(404);
      assertThat(pingStatus(anonymous.at(two.mcpUrl("c")))).isEqualTo(404);
      assertThat(historyStatus(anonymous.at(two.mcpUrl("c")).as(ARGOS))).isEqualTo(200);
    }
  }

  private static final String DAEDALUS = "daedalus-token-0123456789abcdef";
  private static final String ARGOS = "argos-token-abcdefghijklmnopqr";

  private RunningFleet replica(String fleet, Path tokens) {
    return RunningFleet.start(
        fleet,
        o -> o.withStaticTokens(StaticTokenFiles.read(tokens)),
        metrics ->
            new PostgresStore(
                StoreConfig.of(url, PostgresServer.USER, PostgresServer.PASSWORD),
                "replicas",
                metrics::storeUp));
  }

  private static int pingStatus(RawMcp session) throws Exception {
    return session.post("{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"ping\"}").statusCode();
  }

  private static int historyStatus(RawMcp session) throws Exception {
    return session
        .post(
            "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"prompts/get\",\"params\":{\"name\":"
                + "\"c_history\"}}")
        .statusCode();
  }

  private long storedSessions() throws Exception {
    try (var c =
            java.sql.DriverManager.getConnection(
                url, PostgresServer.USER, PostgresServer.PASSWORD);
        var s = c.createStatement();
        var r = s.executeQuery("SELECT count(*) FROM pallas_mcp_session WHERE agent = 'c'")) {
      r.next();
      return r.getLong(1);
    }
  }
}
