package ca.helu.pallas.runtime.it;

import static ca.helu.pallas.runtime.testing.McpClients.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.runtime.llm.Retry;
import ca.helu.pallas.runtime.serve.DefaultAgentParts;
import ca.helu.pallas.runtime.testing.FakeLlmServer;
import ca.helu.pallas.runtime.testing.McpClients;
import ca.helu.pallas.runtime.testing.RawMcp;
import ca.helu.pallas.runtime.testing.RunningFleet;
import ca.helu.pallas.runtime.testing.TestMcpServer;
import com.fasterxml.jackson.databind.JsonNode;
import io.modelcontextprotocol.client.McpAsyncClient;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.spec.McpSchema;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

/**
 * The LLM's answer streamed (docs/runtime.md, "Streamed answers"): for a call with a progressToken
 * through the providers' streaming APIs (the fake speaking OpenAI's and Anthropic's server-sent
 * events), with the same result, tool calls, token counts, retries and errors as an answer that
 * comes whole, its text relayed as {@code {agent} text: …} progress (docs/contract.md, "Progress");
 * a call without one is not streamed.
 */
class StreamingIT {
  private static FakeLlmServer openai;
  private static FakeLlmServer anthropic;
  private static TestMcpServer tools;
  private static RunningFleet fleet;

  @BeforeAll
  static void start() throws Exception {
    openai = FakeLlmServer.openAi("qwen3-8b");
    anthropic = FakeLlmServer.anthropic("claude-sonnet-4-5");
    tools = TestMcpServer.start();
    fleet =
        RunningFleet.start(
            """
            apiVersion: pallas.helu.ca/v1alpha1
            kind: PallasDeployment
            metadata: {name: streaming}
            spec:
              registry: {port: ${port:registry}}
              providers:
                openai: {baseUrl: "%s", apiKey: {env: TEST_OPENAI_KEY}}
                anthropic: {baseUrl: "%s", apiKey: {env: TEST_ANTHROPIC_KEY}}
              mcpServers: [{name: tools, url: "%s"}]
              agents:
                - name: oa
                  port: ${port:oa}
                  model: openai.qwen3-8b
                  servers: [tools]
                  instanceScope: request
                  requestParams: {temperature: 0.5, topK: 40, maxIterations: 3}
                - name: an
                  port: ${port:an}
                  model: anthropic.claude-sonnet-4-5
                  servers: [tools]
                  instanceScope: request
                - name: lead
                  port: ${port:lead}
                  model: openai.qwen3-8b
                  servers: [oa]
                  instanceScope: request
            """
                .formatted(openai.baseUrl(), anthropic.baseUrl(), tools.url()),
            Map.of("TEST_OPENAI_KEY", "sk-test", "TEST_ANTHROPIC_KEY", "sk-ant-test"),
            new DefaultAgentParts.Timings(
                Duration.ofMillis(100),
                Duration.ofSeconds(15),
                Duration.ofSeconds(3),
                Duration.ofMinutes(5),
                Duration.ofMinutes(1),
                new Retry(2, Duration.ofMillis(20), Duration.ofSeconds(2))));
  }

  @AfterAll
  static void stop() {
    fleet.close();
    openai.close();
    anthropic.close();
    tools.close();
  }

  @BeforeEach
  void clear() {
    openai.reset();
    anthropic.reset();
    openai.streaming(4, 0);
    anthropic.streaming(4, 0);
  }

  /** A send_message call with (or without, when null) a progressToken, and its notifications. */
  private record Call(McpSchema.CallToolResult result, List<McpSchema.ProgressNotification> seen) {}

  private static Call call(String agent, String message, String token) {
    List<McpSchema.ProgressNotification> seen = McpClients.newProgressLog();
    try (McpSyncClient c = McpClients.connect(fleet.mcpUrl(agent), null, seen::add)) {
      McpSchema.CallToolRequest.Builder request =
          McpSchema.CallToolRequest.builder("send_message").arguments(Map.of("message", message));
      if (token != null) {
        request.progressToken(token);
      }
      return new Call(c.callTool(request.build()), seen);
    }
  }

  /**
   * A call through the SDK's async client, whose progress consumer runs as each notification
   * arrives, in the stream's order (the sync client's runs later, on another thread): what it has
   * seen when the result arrives is what came before the result.
   */
  private static Call followed(String agent, String message, String token) {
    List<McpSchema.ProgressNotification> seen = new CopyOnWriteArrayList<>();
    String url = fleet.mcpUrl(agent);
    int slash = url.indexOf('/', "http://".length());
    McpAsyncClient client =
        McpClient.async(
                HttpClientStreamableHttpTransport.builder(url.substring(0, slash))
                    .endpoint(url.substring(slash))
                    .build())
            .requestTimeout(Duration.ofSeconds(60))
            .progressConsumer(n -> Mono.fromRunnable(() -> seen.add(n)))
            .build();
    try {
      client.initialize().block();
      McpSchema.CallToolRequest.Builder request =
          McpSchema.CallToolRequest.builder("send_message").arguments(Map.of("message", message));
      if (token != null) {
        request.progressToken(token);
      }
      McpSchema.CallToolResult result = client.callTool(request.build()).block();
      return new Call(result, List.copyOf(seen));
    } finally {
      client.closeGracefully().block();
    }
  }

  /** The text notifications of {@code agent}, the prefix taken off, in arrival order. */
  private static List<String> textOf(String agent, Call call) {
    String prefix = agent + " text: ";
    return call.seen().stream()
        .map(McpSchema.ProgressNotification::message)
        .filter(m -> m.startsWith(prefix))
        .map(m -> m.substring(prefix.length()))
        .toList();
  }

  private static void assertStrictlyIncreasing(Call call) {
    List<Double> progress =
        call.seen().stream().map(McpSchema.ProgressNotification::progress).toList();
    assertThat(progress).as("progress in arrival order").isSorted().doesNotHaveDuplicates();
  }

  @Test
  void theAnswersTextArrivesAsProgressInOrderBeforeTheResult() {
    String answer = "The quick brown fox jumps over the lazy dog, and then it does it again.";
    openai.streaming(8, 30);
    openai.then(openai.text(answer, 5, 9));
    Call oa = followed("oa", "hello", "live");
    assertThat(text(oa.result())).isEqualTo(answer);
    List<String> pieces = textOf("oa", oa);
    assertThat(pieces)
        .as("a slow model's text comes in several notifications")
        .hasSizeGreaterThan(1);
    assertThat(String.join("", pieces)).isEqualTo(answer);
    assertThat(oa.seen().get(0).message()).isEqualTo("oa step 1 (llm)");
    assertThat(oa.seen())
        .filteredOn(n -> n.message().startsWith("oa text: "))
        .allMatch(n -> n.total() == null);
    assertStrictlyIncreasing(oa);

    String reply = "Anthropic's answer, written a little at a time.";
    anthropic.streaming(6, 30);
    anthropic.then(anthropic.text(reply, 5, 9));
    Call an = followed("an", "hello", "live-an");
    assertThat(text(an.result())).isEqualTo(reply);
    assertThat(textOf("an", an)).hasSizeGreaterThan(1);
    assertThat(String.join("", textOf("an", an))).isEqualTo(reply);
    assertStrictlyIncreasing(an);
  }

  @Test
  void aFastModelsTextIsBatchedIntoAtMostOneNotificationPer100Ms() {
    String answer = "token ".repeat(300);
    openai.streaming(300, 1);
    openai.then(openai.text(answer, 5, 300));
    long start = System.nanoTime();
    Call oa = followed("oa", "hello", "fast");
    long tookMillis = (System.nanoTime() - start) / 1_000_000;
    List<String> pieces = textOf("oa", oa);
    assertThat(String.join("", pieces)).isEqualTo(answer);
    assertThat(pieces)
        .as("300 pieces in %d ms: at most one notification per 100 ms", tookMillis)
        .hasSizeLessThanOrEqualTo(2 + (int) (tookMillis / 100));
  }

  @Test
  void aSubAgentsTextIsRelayedWithItsName() {
    openai.then(
        openai.toolCall("call_1", "oa__oa", "{\"message\":\"ask the helper\"}"),
        openai.text("the helper's own words", 3, 4),
        openai.text("the lead's answer", 3, 4));
    Call lead = followed("lead", "go", "chain");
    assertThat(text(lead.result())).isEqualTo("the lead's answer");
    assertThat(String.join("", textOf("oa", lead))).isEqualTo("the helper's own words");
    assertThat(String.join("", textOf("lead", lead))).isEqualTo("the lead's answer");
    List<String> messages =
        lead.seen().stream().map(McpSchema.ProgressNotification::message).toList();
    int started = messages.indexOf("oa/oa: started");
    int helperText = messages.indexOf("oa text: " + textOf("oa", lead).get(0));
    int completed = messages.indexOf("oa/oa: completed");
    assertThat(started).isLessThan(helperText);
    assertThat(helperText).isLessThan(completed);
    assertStrictlyIncreasing(lead);
  }

  @Test
  void aFollowedCallStreamsBothProvidersAnswersAndTheirToolCallsStillWork() {
    String input = "pallas_llm_tokens_total{agent=\"oa\",kind=\"input\",model=\"qwen3-8b\"}";
    double before = metric(input);
    openai.then(
        openai.toolCall("call_1", "tools__echo", "{\"text\":\"from the tool\"}"),
        openai.text("the tool said: from the tool", 20, 7));
    Call oa = call("oa", "hello", "t-oa");
    assertThat(oa.result().isError()).isFalse();
    assertThat(text(oa.result())).isEqualTo("the tool said: from the tool");
    List<FakeLlmServer.Request> requests = openai.chatRequests();
    assertThat(requests).hasSize(2);
    for (FakeLlmServer.Request r : requests) {
      assertThat(r.body().path("stream").asBoolean()).as("streamed").isTrue();
      assertThat(r.body().at("/stream_options/include_usage").asBoolean()).isTrue();
      assertThat(r.body().get("temperature").asDouble()).as("the same parameters").isEqualTo(0.5);
      assertThat(r.body().get("top_k").asInt()).isEqualTo(40);
    }
    JsonNode toolMessage = requests.get(1).body().get("messages").get(2);
    assertThat(toolMessage.get("tool_call_id").asText()).isEqualTo("call_1");
    assertThat(toolMessage.get("content").asText()).isEqualTo("from the tool");
    assertThat(metric(input) - before)
        .as("10 + 20 input tokens, from the usage chunks")
        .isEqualTo(30);

    anthropic.then(
        anthropic.toolCall("toolu_1", "tools__echo", "{\"text\":\"echoed\"}"),
        anthropic.text("fine", 12, 3));
    Call an = call("an", "hi", "t-an");
    assertThat(text(an.result())).isEqualTo("fine");
    List<FakeLlmServer.Request> anthropicRequests = anthropic.chatRequests();
    assertThat(anthropicRequests).hasSize(2);
    assertThat(anthropicRequests).allMatch(r -> r.body().path("stream").asBoolean());
    JsonNode toolResult =
        anthropicRequests.get(1).body().get("messages").get(2).get("content").get(0);
    assertThat(toolResult.get("tool_use_id").asText()).isEqualTo("toolu_1");
    assertThat(toolResult.toString()).contains("echoed");
  }

  @Test
  void aCallWithoutAProgressTokenIsNotStreamed() {
    openai.then(openai.text("whole", 1, 1));
    Call call = followed("oa", "hello", null);
    assertThat(text(call.result())).isEqualTo("whole");
    assertThat(call.seen()).as("no progress, no text").isEmpty();
    assertThat(openai.chatRequests().get(0).body().path("stream").asBoolean(false)).isFalse();
  }

  @Test
  void aStreamBrokenBeforeAnyTextIsRetriedOnceTextWasSeenItFailsClearly() {
    openai.then(
        FakeLlmServer.breakingAfter(0, openai.text("never seen", 1, 1)),
        openai.text("recovered", 1, 1));
    assertThat(text(call("oa", "x", "t1").result())).isEqualTo("recovered");
    assertThat(openai.chatRequests()).as("retried: nothing had reached the caller").hasSize(2);

    openai.reset();
    openai.then(
        FakeLlmServer.breakingAfter(2, openai.text("half of an answer", 1, 1)),
        openai.text("a different answer", 1, 1));
    Call broken = followed("oa", "x", "t2");
    assertThat(broken.result().isError()).isTrue();
    assertThat(String.join("", textOf("oa", broken)))
        .as("the text streamed before the break, then the error")
        .isEqualTo("half of an answer".substring(0, 8));
    assertThat(text(broken.result()))
        .isEqualTo(
            "The model openai.qwen3-8b failed: openai.qwen3-8b: the connection failed before the"
                + " answer was complete");
    assertThat(openai.chatRequests())
        .as("not retried: part of the answer had been streamed")
        .hasSize(1);

    anthropic.then(FakeLlmServer.breakingAfter(1, anthropic.text("cut short", 1, 1)));
    Call anthropicBroken = call("an", "x", "t3");
    assertThat(anthropicBroken.result().isError()).isTrue();
    assertThat(text(anthropicBroken.result()))
        .isEqualTo(
            "The model anthropic.claude-sonnet-4-5 failed: anthropic.claude-sonnet-4-5: the"
                + " connection failed before the answer was complete");
  }

  @Test
  void aStalledStreamEndsAtTheRequestTimeoutAndItsConnectionIsClosed() {
    openai.then(FakeLlmServer.stallAfterHeaders(), FakeLlmServer.stallAfterHeaders());
    Call stalled = call("oa", "x", "t4");
    assertThat(stalled.result().isError()).isTrue();
    assertThat(text(stalled.result()))
        .endsWith("no complete answer within the LLM request timeout of 2 s");
    assertThat(openai.chatRequests()).hasSize(2);
    await()
        .atMost(Duration.ofSeconds(5))
        .untilAsserted(() ->
            assertThat(openai.chatRequests())
                .allMatch(r -> r.abandoned().isDone(), "connection closed"));
  }

  @Test
  void aCancelledCallClosesItsStreamsConnection() throws Exception {
    openai.streaming(40, 200); // 8 s of answer
    openai.then(openai.text("a long answer that nobody waits for", 1, 1));
    RawMcp session = RawMcp.open(fleet.mcpUrl("oa"), null);
    CompletableFuture<HttpResponse<String>> call =
        session.postAsync(
            "{\"jsonrpc\":\"2.0\",\"id\":41,\"method\":\"tools/call\",\"params\":{\"name\":"
                + "\"send_message\",\"arguments\":{\"message\":\"x\"},"
                + "\"_meta\":{\"progressToken\":\"c\"}}}");
    await().atMost(Duration.ofSeconds(10)).until(() -> openai.chatRequests().size() == 1);
    assertThat(openai.chatRequests().get(0).body().path("stream").asBoolean()).isTrue();
    session.post(
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
            + "\"params\":{\"requestId\":41}}");
    await()
        .atMost(Duration.ofSeconds(4))
        .until(() -> openai.chatRequests().get(0).abandoned().isDone());
    assertThat(RawMcp.answer(call.get(10, TimeUnit.SECONDS).body(), 41)).isNull();
  }

  private static double metric(String series) {
    try {
      String text =
          HttpClient.newHttpClient()
              .send(
                  HttpRequest.newBuilder(URI.create(fleet.registryBase() + "/metrics")).build(),
                  HttpResponse.BodyHandlers.ofString())
              .body();
      for (String line : text.split("\n")) {
        if (line.startsWith(series + " ")) {
          return Double.parseDouble(line.substring(series.length() + 1));
        }
      }
      return 0;
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
