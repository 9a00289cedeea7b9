package ca.helu.pallas.runtime.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.runtime.store.SessionStores;
import ca.helu.pallas.runtime.testing.FakeLlmServer;
import ca.helu.pallas.runtime.testing.RawMcp;
import ca.helu.pallas.runtime.testing.ResumableCalls;
import ca.helu.pallas.runtime.testing.RunningFleet;
import ca.helu.pallas.runtime.testing.TestMcpServer;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Resumable streams (issue 17 §2; MCP 2025-11-25, "Resumability and Redelivery"; docs/contract.md,
 * "Streams"): a call's SSE stream starts with a priming event (an id, a retry field, no data),
 * every event has an id, and a client whose connection breaks mid turn comes back with GET and
 * {@code Last-Event-ID} and receives the rest of its progress and its result: from the same replica
 * while the turn runs there, or from another replica sharing the event store.
 */
class ResumableStreamsIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient HTTP = HttpClient.newHttpClient();
  private static final String MANIFEST =
      """
      apiVersion: pallas.helu.ca/v1alpha1
      kind: PallasDeployment
      metadata: {name: resume}
      spec:
        registry: {port: ${port:registry}}
        providers:
          openai: {baseUrl: "%s"}
        mcpServers: [{name: tools, url: "%s"}]
        agents:
          - {name: talker, port: ${port:talker}, model: openai.m, servers: [tools]}
      """;

  private FakeLlmServer llm;
  private TestMcpServer tools;
  private final CountDownLatch gate = new CountDownLatch(1);

  @BeforeEach
  void start() throws Exception {
    llm = FakeLlmServer.openAi("m");
    tools = TestMcpServer.start();
    // the turn's first model call waits for the gate: the client leaves meanwhile
    AtomicInteger calls = new AtomicInteger();
    llm.otherwise(() -> {
      if (calls.incrementAndGet() == 1) {
        try {
          gate.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        return llm.toolCall("c1", "tools__echo", "{\"text\":\"x\"}");
      }
      return llm.text("the answer after the break", 1, 1);
    });
  }

  @AfterEach
  void stop() {
    gate.countDown();
    tools.close();
    llm.close();
  }

  private String manifest() {
    return MANIFEST.formatted(llm.baseUrl(), tools.url());
  }

  @Test
  void aClientWhoseConnectionBreaksMidTurnResumesOnTheSameReplica() throws Exception {
    try (RunningFleet fleet = RunningFleet.replica(manifest(), SessionStores.inMemory())) {
      RawMcp session = RawMcp.open(fleet.mcpUrl("talker"), null, "2025-11-25");
      String lastId = callAndLeave(fleet.port("talker"), session.session());

      assertResumesWithTheRest(fleet.mcpUrl("talker"), session.session(), lastId);
    }
  }

  @Test
  void aClientResumesOnAnotherReplicaSharingTheEventStore() throws Exception {
    SessionStores stores = SessionStores.inMemory();
    try (RunningFleet one = RunningFleet.replica(manifest(), stores);
        RunningFleet two = RunningFleet.replica(manifest(), stores)) {
      RawMcp session = RawMcp.open(one.mcpUrl("talker"), null, "2025-11-25");
      String lastId = callAndLeave(one.port("talker"), session.session());

      assertResumesWithTheRest(two.mcpUrl("talker"), session.session(), lastId);
    }
  }

  /**
   * Sends a send_message call on a raw connection, reads its stream until its first progress
   * notification, and closes the connection; the id of the last event read.
   */
  private static String callAndLeave(int port, String session) throws Exception {
    List<ResumableCalls.Event> events =
        ResumableCalls.callAndLeave(port, session, 21, "go", "step 1");
    assertThat(events).as("the stream's events").hasSizeGreaterThanOrEqualTo(2);
    ResumableCalls.Event priming = events.get(0);
    assertThat(priming.id()).as("the priming event's id").isNotBlank();
    assertThat(priming.retry()).as("the priming event's retry field").isEqualTo("1000");
    assertThat(priming.data()).as("the priming event's data").isEmpty();
    String last = events.get(events.size() - 1).id();
    assertThat(last).as("the progress event's id").isNotEqualTo(priming.id());
    return last;
  }

  /**
   * Resumes the stream after {@code lastId} while the turn still waits on the model, lets the model
   * go on, and checks the rest of the progress and the result arrive, each with a later id.
   */
  private void assertResumesWithTheRest(String url, String session, String lastId)
      throws Exception {
    Iterator<String> lines = ResumableCalls.resume(url, session, lastId);
    gate.countDown(); // the turn goes on, with no client connected to its first stream

    List<String> ids = new ArrayList<>();
    List<String> progress = new ArrayList<>();
    JsonNode result = null;
    while (result == null && lines.hasNext()) {
      String line = lines.next();
      if (line.startsWith("id: ")) {
        ids.add(line.substring(4));
      } else if (line.startsWith("data: ")) {
        JsonNode message = JSON.readTree(line.substring(6));
        if (message.path("method").asText().equals("notifications/progress")) {
          progress.add(message.at("/params/message").asText());
        } else if (message.path("id").asInt() == 21) {
          result = message.get("result");
        }
      }
    }
    assertThat(result).as("the call's result, after the break").isNotNull();
    assertThat(result.at("/content/0/text").asText()).isEqualTo("the answer after the break");
    // the answer's text comes as it streamed (docs/contract.md, "Progress"), in however many
    // messages the batching made of it
    String text =
        progress.stream()
            .filter(m -> m.startsWith("talker text: "))
            .map(m -> m.substring("talker text: ".length()))
            .collect(java.util.stream.Collectors.joining());
    assertThat(text).isEqualTo("the answer after the break");
    assertThat(progress)
        .as("the progress sent after the break")
        .filteredOn(m -> !m.startsWith("talker text: "))
        .containsExactly(
            "talker step 2 (tool)",
            "tools/echo: started",
            "tools/echo: completed",
            "talker step 3 (llm)");
    long last = ResumableCalls.seq(lastId);
    assertThat(ids)
        .allMatch(i -> ResumableCalls.seq(i) > last)
        .isSortedAccordingTo((a, b) -> Long.compare(ResumableCalls.seq(a), ResumableCalls.seq(b)));
    await().atMost(Duration.ofSeconds(5)).until(() -> llm.chatRequests().size() == 2);
  }
}
