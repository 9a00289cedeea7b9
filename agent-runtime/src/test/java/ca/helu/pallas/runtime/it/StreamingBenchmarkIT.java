package ca.helu.pallas.runtime.it;

import static org.assertj.core.api.Assertions.assertThat;

import ca.helu.pallas.runtime.testing.FakeLlmServer;
import ca.helu.pallas.runtime.testing.RunningFleet;
import io.modelcontextprotocol.client.McpAsyncClient;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.spec.McpSchema;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * What streaming the LLM's text buys a caller (issue 19 §2, docs/benchmarks.md "The LLM's text,
 * live"); it prints the figures. One agent on the fake OpenAI endpoint, which writes its answer
 * slowly (40 pieces, 50 ms apart); calls through the SDK's client, alternating: with a
 * progressToken (streamed), the time from the call to its first {@code text} message and to its
 * result; without one (the answer whole), the time to the result.
 */
class StreamingBenchmarkIT {
  private static final int PIECES = 40;
  private static final long GAP_MILLIS = 50;
  private static final int WARM_UP = 2;
  private static final int ROUNDS = 9;

  @Test
  void measureTheTimeToTheFirstText() throws Exception {
    try (FakeLlmServer llm = FakeLlmServer.openAi("slow-writer");
        RunningFleet fleet =
            RunningFleet.start(
                """
                apiVersion: pallas.helu.ca/v1alpha1
                kind: PallasDeployment
                metadata: {name: bench}
                spec:
                  registry: {port: ${port:registry}}
                  providers:
                    openai: {baseUrl: "%s"}
                  agents:
                    - {name: w, port: ${port:w}, model: openai.slow-writer, instanceScope: request}
                """
                    .formatted(llm.baseUrl()))) {
      String answer = "word ".repeat(PIECES * 4);
      llm.streaming(PIECES, GAP_MILLIS).otherwise(() -> llm.text(answer, 10, PIECES * 4));
      List<Long> firstText = new ArrayList<>();
      List<Long> streamedResult = new ArrayList<>();
      List<Long> wholeResult = new ArrayList<>();
      List<Integer> messages = new ArrayList<>();
      for (int round = 0; round < WARM_UP + ROUNDS; round++) {
        Timed streamed = call(fleet.mcpUrl("w"), "t" + round);
        Timed whole = call(fleet.mcpUrl("w"), null);
        assertThat(streamed.text()).isEqualTo(answer);
        assertThat(whole.text()).isEqualTo(answer);
        assertThat(streamed.firstTextNanos()).as("text before the result").isPositive();
        assertThat(whole.firstTextNanos()).as("no text without a token").isZero();
        if (round >= WARM_UP) {
          firstText.add(streamed.firstTextNanos());
          streamedResult.add(streamed.resultNanos());
          wholeResult.add(whole.resultNanos());
          messages.add(streamed.textMessages());
        }
      }
      System.out.printf(
          Locale.ROOT,
          "streaming, %d pieces %d ms apart, median of %d calls: first text %.1f ms, result %.1f"
              + " ms (%d text messages); without a progressToken: result %.1f ms%n",
          PIECES,
          GAP_MILLIS,
          ROUNDS,
          median(firstText) / 1e6,
          median(streamedResult) / 1e6,
          messages.stream().sorted().toList().get(messages.size() / 2),
          median(wholeResult) / 1e6);
      assertThat(median(firstText)).isLessThan(median(streamedResult) / 4);
    }
  }

  /** One call: its answer, when its first text message and its result came (0: none). */
  private record Timed(String text, long firstTextNanos, long resultNanos, int textMessages) {}

  private static Timed call(String url, String token) {
    AtomicLong first = new AtomicLong();
    AtomicLong texts = new AtomicLong();
    long[] start = new long[1];
    int slash = url.indexOf('/', "http://".length());
    McpAsyncClient client =
        McpClient.async(
                HttpClientStreamableHttpTransport.builder(url.substring(0, slash))
                    .endpoint(url.substring(slash))
                    .build())
            .requestTimeout(Duration.ofSeconds(60))
            .progressConsumer(n ->
                reactor.core.publisher.Mono.fromRunnable(() -> {
                  if (n.message().startsWith("w text: ")) {
                    texts.incrementAndGet();
                    first.compareAndSet(0, System.nanoTime() - start[0]);
                  }
                }))
            .build();
    try {
      client.initialize().block();
      McpSchema.CallToolRequest.Builder request =
          McpSchema.CallToolRequest.builder("send_message").arguments(Map.of("message", "go"));
      if (token != null) {
        request.progressToken(token);
      }
      start[0] = System.nanoTime();
      McpSchema.CallToolResult result = client.callTool(request.build()).block();
      long took = System.nanoTime() - start[0];
      return new Timed(
          ((McpSchema.TextContent) result.content().get(0)).text(),
          first.get(),
          took,
          (int) texts.get());
    } finally {
      client.closeGracefully().block();
    }
  }

  private static double median(List<Long> values) {
    List<Long> sorted = values.stream().sorted().toList();
    return sorted.get(sorted.size() / 2);
  }
}
