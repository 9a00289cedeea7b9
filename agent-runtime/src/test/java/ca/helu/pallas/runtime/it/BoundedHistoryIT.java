package ca.helu.pallas.runtime.it;

import static org.assertj.core.api.Assertions.assertThat;

import ca.helu.pallas.runtime.testing.RawMcp;
import ca.helu.pallas.runtime.testing.RunningFleet;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * A session's history is bounded by the model's context window (the oldest turns go) and freed when
 * the client deletes the session; pallas_history_sessions and pallas_history_bytes show it (issue 8
 * §3, in part).
 */
class BoundedHistoryIT {
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  @Test
  void aHistoryStaysWithinTheContextWindowAndGoesWithItsSession() throws Exception {
    try (RunningFleet fleet =
        RunningFleet.start(
            """
            apiVersion: pallas.helu.ca/v1alpha1
            kind: PallasDeployment
            metadata: {name: bounded}
            spec:
              registry: {port: ${port:registry}}
              defaultModel: passthrough
              modelCapabilities: {contextWindow: 1000}
              agents: [{name: a, port: ${port:a}, instanceScope: connection}]
            """)) {
      RawMcp session = RawMcp.open(fleet.mcpUrl("a"), null);
      // 1000 tokens ~ 4000 characters; each turn holds 2000 (the message and its echo)
      for (int i = 0; i < 5; i++) {
        String reply =
            session
                .post(
                    "{\"jsonrpc\":\"2.0\",\"id\":"
                        + (i + 1)
                        + ",\"method\":\"tools/call\","
                        + "\"params\":{\"name\":\"send_message\",\"arguments\":{\"message\":\""
                        + Character.toString('a' + i).repeat(1000)
                        + "\"}}}")
                .body();
        assertThat(reply).contains("\"isError\":false");
      }
      String metrics = fleet.baseUrl("a") + "/metrics";
      assertThat(gauge(metrics, "pallas_history_sessions")).isEqualTo(1);
      double bytes = gauge(metrics, "pallas_history_bytes");
      assertThat(bytes).isGreaterThan(0).isLessThanOrEqualTo(2 * 4000);
      String history =
          session
              .post(
                  "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"prompts/get\","
                      + "\"params\":{\"name\":\"a_history\"}}")
              .body();
      assertThat(history).contains("eeee", "dddd").doesNotContain("aaaa", "bbbb", "cccc");

      assertThat(session.delete()).isLessThan(300);
      assertThat(gauge(metrics, "pallas_history_sessions")).isZero();
      assertThat(gauge(metrics, "pallas_history_bytes")).isZero();
    }
  }

  private static double gauge(String metricsUrl, String name) throws Exception {
    String text =
        HTTP.send(
                HttpRequest.newBuilder(URI.create(metricsUrl)).build(),
                HttpResponse.BodyHandlers.ofString())
            .body();
    Matcher m = Pattern.compile("(?m)^" + name + "\\{agent=\"a\"} (\\S+)$").matcher(text);
    assertThat(m.find()).as("%s in:%n%s", name, text).isTrue();
    return Double.parseDouble(m.group(1));
  }
}
