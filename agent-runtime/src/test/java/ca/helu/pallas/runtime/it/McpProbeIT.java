package ca.helu.pallas.runtime.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.runtime.downstream.McpProbe;
import ca.helu.pallas.runtime.health.CheckResult;
import ca.helu.pallas.runtime.testing.LogCapture;
import ca.helu.pallas.runtime.testing.ServerEverything;
import ch.qos.logback.classic.Level;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The downstream health probe (docs/runtime.md, "Health") against the reference server from npm:
 * each probe of the healthy server says so, and none logs a warning or an error. server-everything
 * tells a new session that its tools changed; the SDK's client answers that by listing the tools,
 * which, on a probe's session closed at once, failed with "Client failed to initialize listing
 * tools" (ERROR) and an answer for an unknown id (WARN).
 */
class McpProbeIT {
  @Test
  void probingTheReferenceServerSaysItIsUpAndLogsNoWarningOrError() throws Exception {
    HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    McpProbe probe = new McpProbe(() -> http, McpProbe.DEFAULT_TIMEOUT);
    try (ServerEverything everything = ServerEverything.start();
        LogCapture log = new LogCapture()) {
      for (int i = 0; i < 10; i++) {
        CheckResult result = probe.probe(everything.url(), Map.of());
        assertThat(result.ok()).as(result.message()).isTrue();
      }
      // what a session does after its probe returned (its close, an answer still coming) is
      // logged later: nothing at WARN or above for as long as that takes
      await()
          .during(Duration.ofSeconds(3))
          .atMost(Duration.ofSeconds(5))
          .until(() -> warnings(log), List::isEmpty);
    }
  }

  private static List<String> warnings(LogCapture log) {
    return log.events().stream()
        .filter(e -> e.getLevel().isGreaterOrEqual(Level.WARN))
        .map(e -> e.getLevel() + " " + e.getLoggerName() + " " + e.getFormattedMessage())
        .toList();
  }
}
