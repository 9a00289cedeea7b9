package ca.helu.pallas.runtime.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.runtime.testing.RawMcp;
import ca.helu.pallas.runtime.testing.RunningFleet;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The heap that session histories take is given back (issue 8 §3): 30 sessions each holding 400,000
 * characters of history raise the heap used after a full GC by megabytes; once their clients DELETE
 * them it falls back near where it started. A message too large for the model's window is not kept
 * at all. Prints the heap per session for docs/benchmarks.md.
 */
class HistoryMemoryIT {
  private static final int SESSIONS = 30;

  @Test
  void deletedSessionsGiveTheirHeapBack() throws Exception {
    try (RunningFleet fleet =
        RunningFleet.start(
            """
            apiVersion: pallas.helu.ca/v1alpha1
            kind: PallasDeployment
            metadata: {name: memory}
            spec:
              registry: {port: ${port:registry}}
              defaultModel: passthrough
              agents: [{name: a, port: ${port:a}, instanceScope: connection}]
            """)) {
      String url = fleet.mcpUrl("a");
      // warm up every path first, so the baseline holds the classes and pools the load needs
      RawMcp warm = RawMcp.open(url, null);
      send(warm, 'w', 100_000);
      assertThat(warm.delete()).isLessThan(300);
      long baseline = heapAfterGc();

      List<RawMcp> sessions = new ArrayList<>();
      for (int i = 0; i < SESSIONS; i++) {
        RawMcp session = RawMcp.open(url, null);
        sessions.add(session);
        send(session, 'a', 100_000); // each turn: the message and its echo, 200,000 chars
        send(session, 'b', 100_000);
      }
      long loaded = heapAfterGc();
      long perSession = (loaded - baseline) / SESSIONS;
      System.out.printf(
          "history memory: baseline %d MiB, %d sessions of 400,000 characters %d MiB (%d KiB a"
              + " session)%n",
          baseline >> 20, SESSIONS, loaded >> 20, perSession >> 10);
      assertThat(loaded - baseline).as("histories are held").isGreaterThan(8L << 20);

      // one message larger than the whole history budget (524,288 characters) is not kept
      RawMcp big = RawMcp.open(url, null);
      send(big, 'c', 400_000);
      assertThat(heapAfterGc() - loaded).isLessThan(2L << 20);
      sessions.add(big);

      for (RawMcp session : sessions) {
        assertThat(session.delete()).isLessThan(300);
      }
      long freed =
          await()
              .atMost(Duration.ofSeconds(30))
              .until(
                  HistoryMemoryIT::heapAfterGc, used -> used - baseline < (loaded - baseline) / 4);
      System.out.printf("history memory: after DELETE %d MiB%n", freed >> 20);
    }
  }

  private static long heapAfterGc() {
    for (int i = 0; i < 3; i++) {
      System.gc();
    }
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }

  private static void send(RawMcp session, char c, int length) throws Exception {
    String message = String.valueOf(c).repeat(length);
    assertThat(RawMcp.text(session.callTool("send_message", Map.of("message", message))))
        .isEqualTo(message);
  }
}
