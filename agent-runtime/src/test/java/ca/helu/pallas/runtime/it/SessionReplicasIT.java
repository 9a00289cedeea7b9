package ca.helu.pallas.runtime.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.runtime.http.EdgeLimits;
import ca.helu.pallas.runtime.serve.ServeOptions;
import ca.helu.pallas.runtime.store.SessionStores;
import ca.helu.pallas.runtime.testing.McpClients;
import ca.helu.pallas.runtime.testing.RawMcp;
import ca.helu.pallas.runtime.testing.RunningFleet;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * An MCP session any replica of an agent can serve (issue 17 §2; docs/runtime.md, "Sessions"): the
 * replicas share a session store, as the pods of an agent share a database, and a replica that gets
 * a request on a session it does not hold re-creates it from the store. The client sees nothing:
 * neither behind a Service without session affinity (each request to another replica), nor after
 * its pod was replaced.
 */
class SessionReplicasIT {
  private static final String MANIFEST =
      """
      apiVersion: pallas.helu.ca/v1alpha1
      kind: PallasDeployment
      metadata: {name: replicas}
      spec:
        registry: {port: ${port:registry}}
        defaultModel: passthrough
        agents: [{name: a, port: ${port:a}}]
      """;

  @Test
  void anSdkClientWhoseRequestsAlternateBetweenTwoReplicasKeepsItsSession() {
    SessionStores store = SessionStores.inMemory();
    try (RunningFleet one = RunningFleet.replica(MANIFEST, store);
        RunningFleet two = RunningFleet.replica(MANIFEST, store)) {
      // a Service without affinity: each request to the next replica
      List<String> replicas = List.of(one.mcpUrl("a"), two.mcpUrl("a"));
      AtomicInteger next = new AtomicInteger();
      try (McpSyncClient client =
          client(() -> replicas.get(next.getAndIncrement() % replicas.size()))) {
        for (int turn = 1; turn <= 4; turn++) {
          assertThat(McpClients.text(McpClients.send(client, "send_message", "turn " + turn)))
              .isEqualTo("turn " + turn);
        }
        assertThat(client.listTools().tools()).extracting(t -> t.name()).contains("get_health");
        assertThat(next.get()).as("requests sent to the replicas").isGreaterThan(6);
        assertThat(sessionsHeld(one)).as("replica one holds the session").isEqualTo(1);
        assertThat(sessionsHeld(two)).as("replica two holds the session").isEqualTo(1);
      }
    }
  }

  @Test
  void aSessionOpenedOnOneReplicaIsServedAndDeletedOnAnother() throws Exception {
    SessionStores store = SessionStores.inMemory();
    try (RunningFleet one = RunningFleet.replica(MANIFEST, store);
        RunningFleet two = RunningFleet.replica(MANIFEST, store)) {
      RawMcp onOne = RawMcp.open(one.mcpUrl("a"), null);
      RawMcp onTwo = onOne.at(two.mcpUrl("a"));

      assertThat(RawMcp.text(onTwo.callTool("send_message", Map.of("message", "hello two"))))
          .isEqualTo("hello two");
      assertThat(ping(onOne)).isEqualTo(200);

      // ended on one replica, it is gone on every one
      assertThat(onTwo.delete()).isEqualTo(200);
      assertThat(ping(onOne)).isEqualTo(404);
      assertThat(ping(onTwo)).isEqualTo(404);
      assertThat(ping(onOne.at(two.mcpUrl("a")))).isEqualTo(404);
    }
  }

  @Test
  void aReplacementPodServesTheSessionsOfThePodItReplaced() {
    SessionStores store = SessionStores.inMemory();
    RunningFleet old = RunningFleet.replica(MANIFEST, store);
    RunningFleet replacement = null;
    try {
      // the Service's one endpoint: the old pod, then the new one
      String[] endpoint = {old.mcpUrl("a")};
      try (McpSyncClient client = client(() -> endpoint[0])) {
        assertThat(McpClients.text(McpClients.send(client, "send_message", "before")))
            .isEqualTo("before");

        old.close();
        replacement = RunningFleet.replica(MANIFEST, store);
        endpoint[0] = replacement.mcpUrl("a");

        assertThat(McpClients.text(McpClients.send(client, "send_message", "after")))
            .isEqualTo("after");
        assertThat(sessionsHeld(replacement)).isEqualTo(1);
      }
    } finally {
      old.close();
      if (replacement != null) {
        replacement.close();
      }
    }
  }

  @Test
  void aSessionIdleOnOneReplicaButUsedOnAnotherLivesOnAndOneUsedNowhereEndsEverywhere()
      throws Exception {
    Duration idle = Duration.ofSeconds(1);
    SessionStores store = SessionStores.inMemory();
    UnaryOperator<ServeOptions> shortIdle =
        o -> o.withLimits(new EdgeLimits(100, idle, 512, 80L << 20, 128L << 20, 4096, 64L << 20));
    try (RunningFleet one = RunningFleet.replica(MANIFEST, store, shortIdle);
        RunningFleet two = RunningFleet.replica(MANIFEST, store, shortIdle)) {
      RawMcp onOne = RawMcp.open(one.mcpUrl("a"), null);
      RawMcp onTwo = onOne.at(two.mcpUrl("a"));
      RawMcp quiet = RawMcp.open(one.mcpUrl("a"), null);

      // used on replica two more often than the idle timeout, for three timeouts: idle on one
      await()
          .during(idle.multipliedBy(3))
          .atMost(idle.multipliedBy(10))
          .pollInterval(idle.dividedBy(4))
          .until(() -> ping(onTwo) == 200);
      assertThat(ping(onOne)).as("idle on one, used on two: it lives on").isEqualTo(200);
      // used nowhere for the idle timeout: ended on every replica
      await()
          .atMost(Duration.ofSeconds(10))
          .untilAsserted(() -> assertThat(ping(quiet.at(two.mcpUrl("a")))).isEqualTo(404));
      assertThat(ping(quiet)).isEqualTo(404);
    }
  }

  /** An SDK client whose every request goes to the URL {@code endpoint} gives at that moment. */
  private static McpSyncClient client(Supplier<String> endpoint) {
    String first = endpoint.get();
    int slash = first.indexOf('/', "http://".length());
    var transport =
        HttpClientStreamableHttpTransport.builder(first.substring(0, slash))
            .endpoint(first.substring(slash))
            .httpRequestCustomizer(
                (request, method, uri, body, context) -> request.uri(URI.create(endpoint.get())))
            .build();
    McpSyncClient client = McpClient.sync(transport).requestTimeout(Duration.ofSeconds(30)).build();
    client.initialize();
    return client;
  }

  private static int ping(RawMcp session) throws Exception {
    return session.post("{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}").statusCode();
  }

  private static double sessionsHeld(RunningFleet fleet) {
    return fleet
        .metrics()
        .scrape()
        .lines()
        .filter(l -> l.startsWith("pallas_mcp_sessions{agent=\"a\"}"))
        .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1)))
        .findFirst()
        .orElse(-1);
  }
}
