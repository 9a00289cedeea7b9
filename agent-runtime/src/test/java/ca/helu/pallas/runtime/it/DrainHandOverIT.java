package ca.helu.pallas.runtime.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.runtime.store.PostgresStore;
import ca.helu.pallas.runtime.store.StoreConfig;
import ca.helu.pallas.runtime.testing.HttpStatus;
import ca.helu.pallas.runtime.testing.PostgresServer;
import ca.helu.pallas.runtime.testing.RawMcp;
import ca.helu.pallas.runtime.testing.RunningFleet;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * An agent pod (`serve --cluster`) that drains hands its sessions over instead of failing calls
 * (docs/runtime.md, "Errors callers see"): the call it runs is answered; a new call on another
 * session is answered 404 "session gone" and a new initialize 503, each closing its connection, so
 * an MCP client starts a new session on a new connection, which a Service routes to a ready
 * replica. The running call's client, sending its next call at once on the same connection, is
 * handed over too. With a store every replica shares, a draining pod serves what still reaches it,
 * closing each connection (issue 17 §5): any replica could have served it.
 */
class DrainHandOverIT {
  @RegisterExtension static final PostgresServer PG = new PostgresServer();
  private static final HttpClient HTTP = HttpClient.newHttpClient();
  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void aDrainingAgentPodSendsNewCallsToAnotherReplica() throws Exception {
    ExecutorService threads = Executors.newCachedThreadPool();
    try (RunningFleet fleet = RunningFleet.start(MANIFEST, options -> options.withCluster(true))) {
      RawMcp running = RawMcp.open(fleet.mcpUrl("a"), null);
      RawMcp idle = RawMcp.open(fleet.mcpUrl("a"), null);
      CompletableFuture<JsonNode> call = callInFlight(running, threads);
      CompletableFuture<Void> drain = drainOnceItsTurnRuns(fleet, Duration.ofSeconds(10), threads);

      HttpResponse<String> gone =
          idle.post(
              "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":"
                  + "{\"name\":\"send_message\",\"arguments\":{\"message\":\"too late\"}}}");
      assertThat(gone.statusCode()).isEqualTo(404);
      assertThat(gone.headers().firstValue("connection")).hasValue("close");
      JsonNode error = JSON.readTree(gone.body());
      assertThat(error.get("id").asInt()).isEqualTo(7);
      assertThat(error.at("/error/code").asInt()).isEqualTo(-32000);
      assertThat(error.at("/error/message").asText())
          .isEqualTo(
              "Not Found: this replica is shutting down and its sessions end with it;"
                  + " initialize a new session");

      HttpResponse<String> initialize = initialize(fleet.mcpUrl("a"));
      assertThat(initialize.statusCode()).isEqualTo(503);
      assertThat(initialize.headers().firstValue("retry-after")).hasValue("1");
      assertThat(initialize.headers().firstValue("connection")).hasValue("close");
      assertThat(JSON.readTree(initialize.body()).at("/error/message").asText())
          .startsWith("Service Unavailable: this replica is shutting down; retry");

      // the call it was running is answered, not refused
      JsonNode result = call.get(30, TimeUnit.SECONDS);
      assertThat(result.path("isError").asBoolean()).isFalse();
      assertThat(RawMcp.text(result)).isEqualTo("in flight");
      // its client's next call, sent at once on the same connection, is handed over too
      HttpResponse<String> next =
          running.post(
              "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":"
                  + "{\"name\":\"send_message\",\"arguments\":{\"message\":\"next\"}}}");
      assertThat(next.statusCode()).isEqualTo(404);
      drain.get(30, TimeUnit.SECONDS);
    } finally {
      threads.shutdownNow();
    }
  }

  @Test
  void aDrainingAgentPodWithASharedStoreServesWhatStillReachesItClosingEachConnection()
      throws Exception {
    ExecutorService threads = Executors.newCachedThreadPool();
    try (RunningFleet fleet = withSharedStore()) {
      RawMcp running = RawMcp.open(fleet.mcpUrl("a"), null);
      RawMcp idle = RawMcp.open(fleet.mcpUrl("a"), null);
      CompletableFuture<JsonNode> call = callInFlight(running, threads);
      CompletableFuture<Void> drain = drainOnceItsTurnRuns(fleet, Duration.ofSeconds(20), threads);

      HttpResponse<String> served =
          idle.post(
              "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":"
                  + "{\"name\":\"send_message\",\"arguments\":{\"message\":\"still served\"}}}");
      assertThat(served.statusCode()).isEqualTo(200);
      assertThat(served.headers().firstValue("connection")).hasValue("close");
      JsonNode answer = RawMcp.answer(served.body(), 7);
      assertThat(answer.path("result").path("isError").asBoolean()).as(answer.toString()).isFalse();
      assertThat(RawMcp.text(answer.path("result"))).isEqualTo("still served");

      HttpResponse<String> initialize = initialize(fleet.mcpUrl("a"));
      assertThat(initialize.statusCode()).isEqualTo(200);
      assertThat(initialize.headers().firstValue("connection")).hasValue("close");
      assertThat(initialize.headers().firstValue("mcp-session-id")).isPresent();

      JsonNode result = call.get(30, TimeUnit.SECONDS);
      assertThat(result.path("isError").asBoolean()).isFalse();
      assertThat(RawMcp.text(result)).isEqualTo("in flight");
      drain.get(30, TimeUnit.SECONDS);
    } finally {
      threads.shutdownNow();
    }
  }

  /**
   * Serving while it drains, a replica closes only once its clients have moved: it ends the GET
   * stream a client listens on (closing its connection), and a client that sends its next call on
   * the connection it kept alive from before the drain is answered, not refused because the replica
   * closed under it (issue 17 §5: "Service Unavailable: this server is shutting down").
   */
  @Test
  void aDrainingAgentPodWithASharedStoreClosesOnlyOnceItsClientsHaveMoved() throws Exception {
    ExecutorService threads = Executors.newCachedThreadPool();
    try (HttpClient listener =
            HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        RunningFleet fleet = withSharedStore()) {
      // the session's initialize leaves its connection alive and idle in the client's pool
      RawMcp client = RawMcp.open(fleet.mcpUrl("a"), null);
      HttpResponse<java.util.stream.Stream<String>> stream =
          listener.send(
              HttpRequest.newBuilder(URI.create(fleet.mcpUrl("a")))
                  .header("Accept", "text/event-stream")
                  .header("Mcp-Session-Id", client.session())
                  .GET()
                  .build(),
              HttpResponse.BodyHandlers.ofLines());
      assertThat(stream.statusCode()).isEqualTo(200);
      CompletableFuture<Long> streamEnded =
          CompletableFuture.supplyAsync(() -> stream.body().count(), threads);

      CompletableFuture<Void> drain =
          CompletableFuture.runAsync(() -> fleet.drain(Duration.ofSeconds(20)), threads);
      await()
          .atMost(Duration.ofSeconds(5))
          .until(() -> HttpStatus.of(fleet.baseUrl("a") + "/readyz") == 503);
      streamEnded.get(10, TimeUnit.SECONDS);
      assertThat(drain).as("the drain waits for the connection its client kept").isNotDone();

      HttpResponse<String> served =
          client.post(
              "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":"
                  + "{\"name\":\"send_message\",\"arguments\":{\"message\":\"after\"}}}");
      assertThat(served.statusCode()).as(served.body()).isEqualTo(200);
      assertThat(served.headers().firstValue("connection")).hasValue("close");
      assertThat(RawMcp.text(RawMcp.answer(served.body(), 9).path("result"))).isEqualTo("after");
      // that was its last connection: the drain ends well before its deadline
      drain.get(10, TimeUnit.SECONDS);
    } finally {
      threads.shutdownNow();
    }
  }

  /**
   * A pod group's pod (docs/operator.md, "Agents sharing a pod") reaches the agents it serves
   * itself on 127.0.0.1, not through their Service (which no cluster resolves here, and which drops
   * a draining pod), and drains the agent that calls first: the coordinator's call in flight (3 s
   * on the slow model), which asks the helper of the same pod only then, is answered although the
   * drain began before it asked.
   */
  @Test
  void aPodGroupsPodDrainsTheAgentsThatCallOthersFirst() throws Exception {
    ExecutorService threads = Executors.newCachedThreadPool();
    try (RunningFleet fleet =
        RunningFleet.start(
            """
            apiVersion: pallas.helu.ca/v1alpha1
            kind: PallasDeployment
            metadata: {name: group}
            spec:
              registry: {port: ${port:registry}}
              defaultModel: passthrough
              podGroups: [{name: both}]
              defaultPodGroup: both
              agents:
                - {name: coordinator, port: ${port:coordinator}, servers: [helper], model: slow}
                - {name: helper, port: ${port:helper}}
            """,
            options ->
                options.withCluster(true).withOnlyAgents(List.of("coordinator", "helper")))) {
      RawMcp coordinator = RawMcp.open(fleet.mcpUrl("coordinator"), null);
      CompletableFuture<JsonNode> call =
          CompletableFuture.supplyAsync(
              () -> {
                try {
                  return coordinator.callTool(
                      "send_message",
                      Map.of("message", "***CALL_TOOL helper__helper {\"message\": \"relayed\"}"));
                } catch (Exception e) {
                  throw new IllegalStateException(e);
                }
              },
              threads);
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() ->
              fleet
                  .metrics()
                  .scrape()
                  .contains("pallas_send_message_in_flight{agent=\"coordinator\"} 1.0"));
      CompletableFuture<Void> drain =
          CompletableFuture.runAsync(() -> fleet.drain(Duration.ofSeconds(20)), threads);
      JsonNode result = call.get(30, TimeUnit.SECONDS);
      assertThat(result.path("isError").asBoolean()).as(result.toString()).isFalse();
      assertThat(RawMcp.text(result)).contains("relayed");
      drain.get(30, TimeUnit.SECONDS);
    } finally {
      threads.shutdownNow();
    }
  }

  private static final String MANIFEST =
      """
      apiVersion: pallas.helu.ca/v1alpha1
      kind: PallasDeployment
      metadata: {name: handover}
      spec:
        registry: {port: ${port:registry}}
        defaultModel: slow
        agents: [{name: a, port: ${port:a}, instanceScope: connection}]
      """;

  /** The fleet as an agent pod serves it, its sessions and conversations in PostgreSQL. */
  private static RunningFleet withSharedStore() throws Exception {
    String url = PG.newDatabase();
    return RunningFleet.start(
        MANIFEST,
        options -> options.withCluster(true),
        metrics ->
            new PostgresStore(
                StoreConfig.of(url, PostgresServer.USER, PostgresServer.PASSWORD),
                "handover",
                metrics::storeUp));
  }

  /** A call on {@code session}, running (the slow model takes 3 s per turn). */
  private static CompletableFuture<JsonNode> callInFlight(RawMcp session, ExecutorService threads) {
    return CompletableFuture.supplyAsync(
        () -> {
          try {
            return session.callTool("send_message", Map.of("message", "in flight"));
          } catch (Exception e) {
            throw new IllegalStateException(e);
          }
        },
        threads);
  }

  /** Once the call in flight has its turn, drains the fleet; returns when it is not ready. */
  private static CompletableFuture<Void> drainOnceItsTurnRuns(
      RunningFleet fleet, Duration timeout, ExecutorService threads) {
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() ->
            fleet
                .metrics()
                .scrape()
                .contains("pallas_send_message_queue_seconds_count{agent=\"a\"} 1"));
    CompletableFuture<Void> drain = CompletableFuture.runAsync(() -> fleet.drain(timeout), threads);
    await()
        .atMost(Duration.ofSeconds(5))
        .until(() -> HttpStatus.of(fleet.baseUrl("a") + "/readyz") == 503);
    return drain;
  }

  /** A new client's initialize. */
  private static HttpResponse<String> initialize(String url) throws Exception {
    return HTTP.send(
        HttpRequest.newBuilder(URI.create(url))
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .POST(
                HttpRequest.BodyPublishers.ofString(
                    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
                        + "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
                        + "\"clientInfo\":{\"name\":\"late\",\"version\":\"1\"}}}"))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }
}
