package ca.helu.pallas.runtime.mcp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class InFlightTest {
  @Test
  void drainingRefusesNewCallsAndWaitsForRunningOnes() throws Exception {
    InFlight calls = new InFlight();
    assertThat(calls.enter()).isTrue();
    CompletableFuture<Boolean> drained =
        CompletableFuture.supplyAsync(() -> {
          try {
            return calls.drain(Duration.ofSeconds(10));
          } catch (InterruptedException e) {
            throw new IllegalStateException(e);
          }
        });
    await().atMost(Duration.ofSeconds(5)).until(calls::draining);
    assertThat(calls.enter()).as("a call arriving during the drain").isFalse();
    assertThat(drained).isNotDone();
    calls.exit();
    assertThat(drained.get(5, TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void theDeadlineReportsUnfinishedCallsAndExpiryAnswersThem() throws Exception {
    InFlight calls = new InFlight();
    assertThat(calls.enter()).isTrue();
    assertThat(calls.drain(Duration.ofMillis(50))).isFalse();
    CompletableFuture<Void> expiry = calls.expiry().toFuture();
    assertThat(expiry).isNotDone();
    calls.expire();
    expiry.get(5, TimeUnit.SECONDS);
  }
}
