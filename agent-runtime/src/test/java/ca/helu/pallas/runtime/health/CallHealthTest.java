package ca.helu.pallas.runtime.health;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** When get_health reports a server's calls as failing, and when it stops. */
class CallHealthTest {
  private final AtomicLong now = new AtomicLong(Duration.ofHours(1).toNanos());
  private final CallHealth health = new CallHealth(now::get);

  private void pass(Duration d) {
    now.addAndGet(d.toNanos());
  }

  @Test
  void aServerWhoseCallsFailIsFailingAndRecoversWithItsFirstGoodCall() {
    assertThat(health.failing()).isEmpty();
    health.failed("the connection failed (Connection reset)");
    health.failed("the connection failed (Connection reset)");
    assertThat(health.failing())
        .contains("2 of 2 calls in the last minute; the connection failed (Connection reset)");
    health.answered();
    assertThat(health.failing()).as("its latest call worked").isEmpty();
  }

  @Test
  void oneStrayFailureAmongGoodCallsIsNotFailing() {
    for (int i = 0; i < 296; i++) {
      health.answered();
    }
    health.failed("timed out after 5s");
    assertThat(health.failing()).isEmpty();
  }

  @Test
  void aMostlyFailingServerIsFailingWhileItsLatestCallFailed() {
    health.answered();
    health.failed("answered HTTP 500");
    health.failed("answered HTTP 500");
    assertThat(health.failing()).contains("2 of 3 calls in the last minute; answered HTTP 500");
  }

  @Test
  void failuresOlderThanTheWindowAreForgotten() {
    health.failed("answered HTTP 500");
    pass(CallHealth.WINDOW.plusSeconds(11));
    assertThat(health.failing()).as("a minute without calls").isEmpty();
    for (int i = 0; i < 5; i++) {
      health.answered();
    }
    pass(CallHealth.WINDOW.plusSeconds(11));
    health.failed("answered HTTP 500");
    assertThat(health.failing())
        .as("the good calls are older than the window too")
        .contains("1 of 1 calls in the last minute; answered HTTP 500");
  }
}
