package ca.helu.pallas.runtime.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.runtime.testing.RawMcp;
import ca.helu.pallas.runtime.testing.RunningFleet;
import com.fasterxml.jackson.databind.JsonNode;
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
import org.junit.jupiter.api.Test;

/**
 * pallas_send_message_in_flight{agent}, the metric an agent's HorizontalPodAutoscaler follows
 * (docs/operations.md, "Scaling"): an agent's /metrics counts the calls it is serving, and drops
 * back to 0 once they are answered.
 */
class SendMessageInFlightIT {
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  @Test
  void theAgentsMetricsCountItsCallsInProgress() throws Exception {
    ExecutorService threads = Executors.newCachedThreadPool();
    try (RunningFleet fleet =
        RunningFleet.start(
            """
            apiVersion: pallas.helu.ca/v1alpha1
            kind: PallasDeployment
            metadata: {name: inflight}
            spec:
              registry: {port: ${port:registry}}
              defaultModel: slow
              agents: [{name: a, port: ${port:a}, instanceScope: connection}]
            """)) {
      String metrics = fleet.baseUrl("a") + "/metrics";
      assertThat(scrape(metrics)).contains("pallas_send_message_in_flight{agent=\"a\"} 0.0");
      List<CompletableFuture<JsonNode>> calls =
          List.of(call(fleet, threads, "one"), call(fleet, threads, "two"));
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> scrape(metrics).contains("pallas_send_message_in_flight{agent=\"a\"} 2.0"));
      for (CompletableFuture<JsonNode> call : calls) {
        assertThat(call.get().toString()).doesNotContain("\"isError\":true");
      }
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> scrape(metrics).contains("pallas_send_message_in_flight{agent=\"a\"} 0.0"));
    } finally {
      threads.shutdownNow();
    }
  }

  private static CompletableFuture<JsonNode> call(
      RunningFleet fleet, ExecutorService threads, String message) throws Exception {
    RawMcp session = RawMcp.open(fleet.mcpUrl("a"), null);
    return CompletableFuture.supplyAsync(
        () -> {
          try {
            return session.callTool("send_message", Map.of("message", message));
          } catch (Exception e) {
            throw new IllegalStateException(e);
          }
        },
        threads);
  }

  private static String scrape(String url) throws Exception {
    return HTTP.send(
            HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString())
        .body();
  }
}
