package ca.helu.pallas.runtime.it;

import static ca.helu.pallas.runtime.testing.McpClients.send;
import static ca.helu.pallas.runtime.testing.McpClients.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.runtime.llm.Retry;
import ca.helu.pallas.runtime.mcp.TurnLimits;
import ca.helu.pallas.runtime.serve.DefaultAgentParts;
import ca.helu.pallas.runtime.testing.FakeLlmServer;
import ca.helu.pallas.runtime.testing.McpClients;
import ca.helu.pallas.runtime.testing.RunningFleet;
import ca.helu.pallas.runtime.testing.TestMcpServer;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Every wait of a turn has an end (docs/runtime.md, "Deadlines and cancellation"), through the real
 * protocol against a fake provider that trickles its answer, stalls after its headers, or asks to
 * be retried later. Two fleets: one whose turn deadline (4 s) is shorter than its LLM request
 * timeout (60 s), one whose LLM request timeout (1 s) is shorter than its turn deadline (60 s).
 */
class TurnDeadlineIT {
  private static final String LONG_ANSWER = "an answer that takes its time ".repeat(20);
  private static TestMcpServer tools;
  private static FakeLlmServer shortTurnLlm;
  private static FakeLlmServer shortRequestLlm;
  private static RunningFleet shortTurn;
  private static RunningFleet shortRequest;

  private static FakeLlmServer claude;

  private static String manifest(String agent, FakeLlmServer llm) {
    return """
    apiVersion: pallas.helu.ca/v1alpha1
    kind: PallasDeployment
    metadata: {name: deadlines}
    spec:
      registry: {port: ${port:registry}}
      providers:
        openai: {baseUrl: "%s"}
        anthropic: {baseUrl: "%s", apiKey: {value: sk-ant-test}}
      mcpServers: [{name: tools, url: "%s"}]
      agents:
        - name: %s
          port: ${port:agent}
          model: openai.m
          servers: [tools]
          instanceScope: request
        - name: %s_claude
          port: ${port:claude}
          model: anthropic.c
          instanceScope: request
    """
        .formatted(llm.baseUrl(), claude.baseUrl(), tools.url(), agent, agent);
  }

  private static DefaultAgentParts.Timings timings(Duration llmTimeout) {
    return new DefaultAgentParts.Timings(
        Duration.ofMillis(100),
        Duration.ofSeconds(15),
        Duration.ofSeconds(3),
        Duration.ofMinutes(5),
        Duration.ofMinutes(1),
        new Retry(3, Duration.ofMillis(20), llmTimeout));
  }

  @BeforeAll
  static void start() throws Exception {
    tools = TestMcpServer.start();
    claude = FakeLlmServer.anthropic("c");
    shortTurnLlm = FakeLlmServer.openAi("m");
    shortRequestLlm = FakeLlmServer.openAi("m");
    shortTurn =
        RunningFleet.start(
            manifest("brief", shortTurnLlm),
            options ->
                options.withTurns(new TurnLimits(Duration.ofSeconds(4), Duration.ofSeconds(1))),
            timings(Duration.ofSeconds(60)));
    shortRequest =
        RunningFleet.start(
            manifest("patient", shortRequestLlm),
            options ->
                options.withTurns(new TurnLimits(Duration.ofSeconds(60), Duration.ofSeconds(1))),
            timings(Duration.ofSeconds(1)));
  }

  @AfterAll
  static void stop() {
    shortTurn.close();
    shortRequest.close();
    shortTurnLlm.close();
    shortRequestLlm.close();
    tools.close();
    claude.close();
  }

  @BeforeEach
  void clear() {
    shortTurnLlm.reset();
    shortRequestLlm.reset();
    claude.reset();
  }

  /** The call's answer and how long it took. */
  private record Timed(McpSchema.CallToolResult result, Duration took) {}

  private static Timed call(RunningFleet fleet, String agent) {
    try (McpSyncClient client = McpClients.connect(fleet.mcpUrl(agent))) {
      long start = System.nanoTime();
      McpSchema.CallToolResult result = send(client, "send_message", "hello");
      return new Timed(result, Duration.ofNanos(System.nanoTime() - start));
    }
  }

  @Test
  void aTricklingAnswerEndsAtTheTurnsDeadlineWithAnErrorNamingTheModelAndTheDeadline() {
    shortTurnLlm.otherwise(() -> FakeLlmServer.trickle(200, shortTurnLlm.text(LONG_ANSWER, 1, 1)));
    Timed call = call(shortTurn, "brief");
    assertThat(call.result().isError()).as(text(call.result())).isTrue();
    assertThat(text(call.result()))
        .isEqualTo(
            "agent 'brief' did not finish within the turn's deadline of 4 s: it was waiting for"
                + " the model openai.m");
    assertThat(call.took()).isBetween(Duration.ofMillis(3900), Duration.ofSeconds(15));
    // the provider's connection is closed, not left to trickle on
    List<FakeLlmServer.Request> requests = shortTurnLlm.chatRequests();
    assertThat(requests).hasSize(1);
    await().atMost(Duration.ofSeconds(10)).until(() -> requests.get(0).abandoned().isDone());
  }

  @Test
  void aProviderThatStallsAfterItsHeadersEndsAtTheTurnsDeadline() {
    shortTurnLlm.otherwise(FakeLlmServer::stallAfterHeaders);
    Timed call = call(shortTurn, "brief");
    assertThat(call.result().isError()).as(text(call.result())).isTrue();
    assertThat(text(call.result())).contains("openai.m").contains("deadline of 4 s");
    assertThat(call.took()).isBetween(Duration.ofMillis(3900), Duration.ofSeconds(15));
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> shortTurnLlm.chatRequests().get(0).abandoned().isDone());
  }

  @Test
  void anAnthropicModelThatStallsEndsAtTheTurnsDeadlineToo() {
    claude.otherwise(FakeLlmServer::stallAfterHeaders);
    Timed call = call(shortTurn, "brief_claude");
    assertThat(call.result().isError()).as(text(call.result())).isTrue();
    assertThat(text(call.result()))
        .isEqualTo(
            "agent 'brief_claude' did not finish within the turn's deadline of 4 s: it was"
                + " waiting for the model anthropic.c");
    assertThat(call.took()).isBetween(Duration.ofMillis(3900), Duration.ofSeconds(15));
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> claude.chatRequests().get(0).abandoned().isDone());
  }

  @Test
  void aToolCallThatOutlastsTheTurnEndsAtItsDeadlineNamingTheToolAndTheModel() {
    shortTurnLlm.then(shortTurnLlm.toolCall("call_1", "tools__sleep", "{\"ms\":30000}"));
    Timed call = call(shortTurn, "brief");
    assertThat(call.result().isError()).as(text(call.result())).isTrue();
    assertThat(text(call.result()))
        .isEqualTo(
            "agent 'brief' did not finish within the turn's deadline of 4 s: it was waiting for"
                + " the tool call tools/sleep (model openai.m)");
    assertThat(call.took()).isBetween(Duration.ofMillis(3900), Duration.ofSeconds(15));
  }

  @Test
  void theLlmRequestTimeoutBoundsTheWholeAnswerOfEachAttempt() {
    shortRequestLlm.otherwise(
        () -> FakeLlmServer.trickle(200, shortRequestLlm.text(LONG_ANSWER, 1, 1)));
    Timed call = call(shortRequest, "patient");
    assertThat(call.result().isError()).as(text(call.result())).isTrue();
    assertThat(text(call.result()))
        .isEqualTo(
            "The model openai.m failed: openai.m: no complete answer within the LLM request"
                + " timeout of 1 s");
    // three attempts of 1 s, never the 60 s a trickle of this answer takes
    assertThat(call.took()).isBetween(Duration.ofSeconds(3), Duration.ofSeconds(20));
    assertThat(shortRequestLlm.chatRequests()).hasSize(3);
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> shortRequestLlm.chatRequests().stream().allMatch(r -> r.abandoned().isDone()));
  }

  @Test
  void retryAfterInSecondsOnA429IsWaitedBeforeTheNextAttempt() {
    shortRequestLlm.then(
        FakeLlmServer.status(429).withHeader("Retry-After", "2"),
        shortRequestLlm.text("after the wait", 1, 1));
    Timed call = call(shortRequest, "patient");
    assertThat(text(call.result())).isEqualTo("after the wait");
    assertThat(gapBetweenRequests(shortRequestLlm))
        .isBetween(Duration.ofMillis(1950), Duration.ofSeconds(15));
  }

  @Test
  void retryAfterAsAnHttpDateOnA503IsWaitedBeforeTheNextAttempt() {
    String inThreeSeconds =
        DateTimeFormatter.RFC_1123_DATE_TIME.format(
            ZonedDateTime.now(ZoneOffset.UTC).plusSeconds(3));
    shortRequestLlm.then(
        FakeLlmServer.status(503).withHeader("Retry-After", inThreeSeconds),
        shortRequestLlm.text("after the date", 1, 1));
    Timed call = call(shortRequest, "patient");
    assertThat(text(call.result())).isEqualTo("after the date");
    // the date has whole seconds: two to three seconds from the refusal
    assertThat(gapBetweenRequests(shortRequestLlm))
        .isBetween(Duration.ofMillis(1500), Duration.ofSeconds(15));
  }

  @Test
  void aRetryAfterPastTheTurnsDeadlineFailsAtOnceSayingSo() {
    shortTurnLlm.otherwise(() -> FakeLlmServer.status(429).withHeader("Retry-After", "3600"));
    Timed call = call(shortTurn, "brief");
    assertThat(call.result().isError()).as(text(call.result())).isTrue();
    assertThat(text(call.result()))
        .startsWith(
            "The model openai.m failed: openai.m: HTTP 429; it asked to be retried after 3600 s"
                + " (Retry-After), past the turn's deadline of 4 s");
    assertThat(call.took()).isLessThan(Duration.ofSeconds(3));
    assertThat(shortTurnLlm.chatRequests()).hasSize(1);
  }

  private static Duration gapBetweenRequests(FakeLlmServer llm) {
    List<FakeLlmServer.Request> requests = llm.chatRequests();
    assertThat(requests).hasSize(2);
    return Duration.ofNanos(requests.get(1).receivedNanos() - requests.get(0).receivedNanos());
  }
}
