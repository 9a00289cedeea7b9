package ca.helu.pallas.runtime.it;

import static org.assertj.core.api.Assertions.assertThat;

import ca.helu.pallas.runtime.testing.RawMcp;
import ca.helu.pallas.runtime.testing.RunningFleet;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A request whose body stalls loses its connection within the body timeout (issue 8 §4), while
 * get_health on another connection answers at once meanwhile.
 */
class StalledUploadIT {
  private static final Duration BODY_TIMEOUT = Duration.ofSeconds(2);

  @Test
  void aStalledBodyIsCutAndOthersAreServedMeanwhile() throws Exception {
    try (RunningFleet fleet =
            RunningFleet.start(
                """
                apiVersion: pallas.helu.ca/v1alpha1
                kind: PallasDeployment
                metadata: {name: stalled}
                spec:
                  registry: {port: ${port:registry}}
                  defaultModel: passthrough
                  agents: [{name: a, port: ${port:a}}]
                """,
                o -> o.withBodyTimeout(BODY_TIMEOUT));
        Socket socket = new Socket("127.0.0.1", fleet.port("a"))) {
      OutputStream out = socket.getOutputStream();
      out.write(
          (RawMcp.postHead("Content-Length: 1000") + "{\"jsonrpc\":\"2.0\",")
              .getBytes(StandardCharsets.US_ASCII));
      out.flush();
      long started = System.nanoTime();

      RawMcp other = RawMcp.open(fleet.mcpUrl("a"), null);
      long healthStart = System.nanoTime();
      assertThat(RawMcp.text(other.callTool("get_health", Map.of()))).contains("\"status\"");
      assertThat(Duration.ofNanos(System.nanoTime() - healthStart)).isLessThan(BODY_TIMEOUT);

      // the server closes the stalled connection: end of stream (or a reset), not our 20 s limit
      socket.setSoTimeout(20_000);
      InputStream in = socket.getInputStream();
      int read;
      try {
        read = in.read();
      } catch (SocketException reset) {
        read = -1;
      }
      Duration closedAfter = Duration.ofNanos(System.nanoTime() - started);
      assertThat(read).isEqualTo(-1);
      assertThat(closedAfter).isGreaterThanOrEqualTo(BODY_TIMEOUT.minusMillis(100));
      assertThat(closedAfter).isLessThan(BODY_TIMEOUT.plusSeconds(5));
    }
  }
}
