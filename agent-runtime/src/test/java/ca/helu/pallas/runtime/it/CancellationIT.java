package ca.helu.pallas.runtime.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.runtime.llm.Retry;
import ca.helu.pallas.runtime.mcp.TurnLimits;
import ca.helu.pallas.runtime.serve.DefaultAgentParts;
import ca.helu.pallas.runtime.testing.FakeLlmServer;
import ca.helu.pallas.runtime.testing.RawMcp;
import ca.helu.pallas.runtime.testing.RunningFleet;
import com.fasterxml.jackson.databind.JsonNode;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A call that its client cancels (notifications/cancelled), leaves (disconnects) or ends (DELETE of
 * its session) stops (docs/runtime.md, "Deadlines and cancellation"): its LLM request is cancelled
 * (the fake provider sees its connection closed), as is a downstream call it waits for (another
 * agent's LLM request), the call queued behind it on the same conversation starts at once, no
 * response is sent for its id, and the history holds no half of its turn.
 */
class CancellationIT {
  /** The agents' one provider: each test scripts its answers in the order they are asked. */
  private static FakeLlmServer llm;

  private static RunningFleet fleet;

  @BeforeAll
  static void start() throws Exception {
    llm = FakeLlmServer.openAi("m");
    fleet =
        RunningFleet.start(
            """
            apiVersion: pallas.helu.ca/v1alpha1
            kind: PallasDeployment
            metadata: {name: cancels}
            spec:
              registry: {port: ${port:registry}}
              providers:
                openai: {baseUrl: "%s"}
              agents:
                - name: talker
                  port: ${port:talker}
                  model: openai.m
                  instanceScope: connection
                - name: hub
                  port: ${port:hub}
                  model: openai.m
                  instanceScope: shared
                - name: worker
                  port: ${port:worker}
                  model: openai.m
                  instanceScope: request
                - name: boss
                  port: ${port:boss}
                  model: openai.m
                  instanceScope: request
                  servers: [worker]
            """
                .formatted(llm.baseUrl()),
            options ->
                options.withTurns(new TurnLimits(Duration.ofSeconds(60), Duration.ofMillis(200))),
            new DefaultAgentParts.Timings(
                Duration.ofMillis(100),
                Duration.ofSeconds(15),
                Duration.ofSeconds(3),
                Duration.ofMinutes(5),
                Duration.ofMinutes(1),
                new Retry(1, Duration.ofMillis(20), Duration.ofSeconds(60))));
  }

  @AfterAll
  static void stop() {
    fleet.close();
    llm.close();
  }

  @BeforeEach
  void clear() {
    llm.reset();
  }

  @Test
  void notificationsCancelledStopsTheCallAndFreesItsConversation() throws Exception {
    RawMcp session = RawMcp.open(fleet.mcpUrl("talker"), null);
    llm.then(FakeLlmServer.stallAfterHeaders(), llm.text("second answer", 1, 1));
    CompletableFuture<HttpResponse<String>> first =
        session.postAsync(RawMcp.toolCall(7, "send_message", Map.of("message", "first")));
    await().atMost(Duration.ofSeconds(10)).until(() -> llm.chatRequests().size() == 1);
    CompletableFuture<HttpResponse<String>> second =
        session.postAsync(RawMcp.toolCall(8, "send_message", Map.of("message", "second")));

    HttpResponse<String> cancel =
        session.post(
            "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
                + "\"params\":{\"requestId\":7,\"reason\":\"changed my mind\"}}");
    assertThat(cancel.statusCode()).isEqualTo(202);

    assertCancelledAndNextStarted(second, "second answer");
    // the cancelled call's stream ends without a response for its id
    HttpResponse<String> cancelled = first.get(10, TimeUnit.SECONDS);
    assertThat(RawMcp.answer(cancelled.body(), 7)).isNull();
    assertHistoryHoldsOnly(session, "talker", "second", "second answer");
  }

  @Test
  void aCancelForAnUnknownOrFinishedCallIsIgnoredQuietly() throws Exception {
    RawMcp session = RawMcp.open(fleet.mcpUrl("talker"), null);
    llm.then(llm.text("done", 1, 1));
    JsonNode done = session.callTool("send_message", Map.of("message", "quick"));
    assertThat(RawMcp.text(done)).isEqualTo("done");
    for (String requestId : List.of("1", "\"never-sent\"", "{\"not\":\"an id\"}")) {
      HttpResponse<String> cancel =
          session.post(
              "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
                  + "\"params\":{\"requestId\":"
                  + requestId
                  + "}}");
      assertThat(cancel.statusCode()).as(requestId).isEqualTo(202);
      assertThat(cancel.body()).as(requestId).isEmpty();
    }
    assertHistoryHoldsOnly(session, "talker", "quick", "done");
  }

  @Test
  void aClientThatDisconnectsStopsItsCall() throws Exception {
    RawMcp session = RawMcp.open(fleet.mcpUrl("talker"), null);
    llm.then(FakeLlmServer.stallAfterHeaders(), llm.text("after the leaver", 1, 1));
    try (Socket socket = new Socket("127.0.0.1", fleet.port("talker"))) {
      socket.setSoTimeout(10_000);
      byte[] body =
          RawMcp.toolCall(11, "send_message", Map.of("message", "leaving"))
              .getBytes(StandardCharsets.UTF_8);
      OutputStream out = socket.getOutputStream();
      out.write(
          RawMcp.postHead(
                  "Mcp-Session-Id: " + session.session() + "\r\nContent-Length: " + body.length)
              .getBytes(StandardCharsets.US_ASCII));
      out.write(body);
      out.flush();
      await().atMost(Duration.ofSeconds(10)).until(() -> llm.chatRequests().size() == 1);
      // the stream has begun (its first heartbeat): the client leaves mid-call
      InputStream in = socket.getInputStream();
      assertThat(new String(in.readNBytes(12), StandardCharsets.US_ASCII))
          .isEqualTo("HTTP/1.1 200");
    }
    CompletableFuture<HttpResponse<String>> next =
        session.postAsync(RawMcp.toolCall(12, "send_message", Map.of("message", "staying")));
    assertCancelledAndNextStarted(next, "after the leaver");
    assertHistoryHoldsOnly(session, "talker", "staying", "after the leaver");
  }

  @Test
  void deletingTheSessionStopsItsCallsAndTheSharedConversationGoesOn() throws Exception {
    RawMcp leaving = RawMcp.open(fleet.mcpUrl("hub"), null);
    RawMcp staying = RawMcp.open(fleet.mcpUrl("hub"), null);
    llm.then(FakeLlmServer.stallAfterHeaders(), llm.text("for the one who stayed", 1, 1));
    CompletableFuture<HttpResponse<String>> first =
        leaving.postAsync(RawMcp.toolCall(21, "send_message", Map.of("message", "deleted")));
    await().atMost(Duration.ofSeconds(10)).until(() -> llm.chatRequests().size() == 1);
    CompletableFuture<HttpResponse<String>> second =
        staying.postAsync(RawMcp.toolCall(22, "send_message", Map.of("message", "kept")));

    assertThat(leaving.delete()).isEqualTo(200);

    assertCancelledAndNextStarted(second, "for the one who stayed");
    HttpResponse<String> cancelled = first.get(10, TimeUnit.SECONDS);
    assertThat(RawMcp.answer(cancelled.body(), 21)).isNull();
    assertHistoryHoldsOnly(staying, "hub", "kept", "for the one who stayed");
  }

  @Test
  void aCancelReachesTheDownstreamCallTheTurnWaitsFor() throws Exception {
    RawMcp session = RawMcp.open(fleet.mcpUrl("boss"), null);
    // the boss asks the worker, whose model then hangs
    llm.then(
        llm.toolCall("call_1", "worker__worker", "{\"message\":\"dig\"}"),
        FakeLlmServer.stallAfterHeaders());
    CompletableFuture<HttpResponse<String>> call =
        session.postAsync(RawMcp.toolCall(31, "send_message", Map.of("message", "delegate")));
    await().atMost(Duration.ofSeconds(10)).until(() -> llm.chatRequests().size() == 2);

    session.post(
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
            + "\"params\":{\"requestId\":31}}");

    // the worker's turn stopped too: its LLM request is cancelled
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> llm.chatRequests().get(1).abandoned().isDone());
    HttpResponse<String> cancelled = call.get(10, TimeUnit.SECONDS);
    assertThat(RawMcp.answer(cancelled.body(), 31)).isNull();
  }

  /**
   * The stopped call's LLM request (the first of the test) was cancelled, and the call queued
   * behind it started at once and got its answer.
   */
  private static void assertCancelledAndNextStarted(
      CompletableFuture<HttpResponse<String>> next, String nextAnswer) throws Exception {
    FakeLlmServer.Request stalled = llm.chatRequests().get(0);
    await().atMost(Duration.ofSeconds(10)).until(() -> stalled.abandoned().isDone());
    HttpResponse<String> answered = next.get(10, TimeUnit.SECONDS);
    assertThat(answered.body()).contains(nextAnswer);
    // the next turn saw no half of the stopped one
    assertThat(FakeLlmServer.roles(llm.chatRequests().get(1))).containsExactly("user");
  }

  /** The history prompt holds exactly one turn: this user message and this answer. */
  private static void assertHistoryHoldsOnly(
      RawMcp session, String agent, String user, String assistant) throws Exception {
    JsonNode history = session.request("prompts/get", Map.of("name", agent + "_history"));
    List<String> messages = new ArrayList<>();
    history
        .get("messages")
        .forEach(m ->
            messages.add(m.get("role").asText() + ": " + m.get("content").get("text").asText()));
    assertThat(messages).containsExactly("user: " + user, "assistant: " + assistant);
  }
}
