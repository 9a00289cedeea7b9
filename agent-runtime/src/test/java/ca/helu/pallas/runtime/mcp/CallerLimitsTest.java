package ca.helu.pallas.runtime.mcp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ca.helu.pallas.api.CallerLimitsSpec;
import io.modelcontextprotocol.spec.McpError;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** Each limit of CallerLimits on a clock of the test's (docs/runtime.md, "Per-caller limits"). */
class CallerLimitsTest {
  private static final long SECOND = 1_000_000_000L;
  private final AtomicLong now = new AtomicLong(42 * SECOND);

  private CallerLimits limits(Integer concurrent, Integer perMinute, Long tokensPerHour) {
    return new CallerLimits(
        "helper", new CallerLimitsSpec(concurrent, perMinute, tokensPerHour), now::get);
  }

  @Test
  void callsAtOnceAreCountedPerCallerAndGivenBackOnce() throws Exception {
    CallerLimits limits = limits(2, null, null);
    CallerLimits.Admission a1 = limits.admit("alice");
    limits.admit("alice");
    assertThatThrownBy(() -> limits.admit("alice"))
        .isInstanceOfSatisfying(
            CallerLimits.Refused.class,
            r -> {
              assertThat(r.limit).isEqualTo("concurrentCalls");
              assertThat(r.getMessage())
                  .isEqualTo(
                      "Too Many Requests: caller 'alice' has 2 calls to agent 'helper' in"
                          + " progress, its limit (concurrentCalls 2); retry when one has ended");
            });
    limits.admit("bob"); // another caller has its own
    a1.release();
    a1.release(); // once only
    limits.admit("alice");
    assertThatThrownBy(() -> limits.admit("alice")).isInstanceOf(CallerLimits.Refused.class);
  }

  @Test
  void callsPerMinuteRefillEvenlyAndSayWhenToRetry() throws Exception {
    CallerLimits limits = limits(null, 2, null);
    limits.admit("alice").release();
    limits.admit("alice").release();
    assertThatThrownBy(() -> limits.admit("alice"))
        .isInstanceOfSatisfying(
            CallerLimits.Refused.class,
            r -> {
              assertThat(r.limit).isEqualTo("callsPerMinute");
              assertThat(r.retryAfterSeconds).isEqualTo(30);
            });
    now.addAndGet(30 * SECOND); // one call's worth
    limits.admit("alice");
    assertThatThrownBy(() -> limits.admit("alice")).isInstanceOf(CallerLimits.Refused.class);
  }

  @Test
  void tokensPerHourAreChargedAfterTheCallAndRefillOverTheHour() throws Exception {
    CallerLimits limits = limits(null, null, 3600L);
    CallerLimits.Admission call = limits.admit("alice");
    call.charge(4000); // overdrawn: this call finishes, the next waits
    call.release();
    assertThatThrownBy(() -> limits.admit("alice"))
        .isInstanceOfSatisfying(
            CallerLimits.Refused.class,
            r -> {
              assertThat(r.limit).isEqualTo("llmTokensPerHour");
              // 400 tokens owed plus one, at one token a second
              assertThat(r.retryAfterSeconds).isEqualTo(401);
            });
    now.addAndGet(401 * SECOND);
    limits.admit("alice");
  }

  @Test
  void aRefusalIsTheJsonRpcErrorMinus32002WithTheLimitAndTheRetry() {
    McpError error =
        new CallerLimits.Refused("callsPerMinute", 7, "Too Many Requests: …").asMcpError();
    assertThat(error.getJsonRpcError().code()).isEqualTo(-32002);
    assertThat(error.getJsonRpcError().data())
        .isEqualTo(Map.of("limit", "callsPerMinute", "retryAfterSeconds", 7L));
  }

  @Test
  void withoutLimitsEveryCallIsAdmitted() throws Exception {
    for (int i = 0; i < 1000; i++) {
      CallerLimits.NONE.admit("alice");
    }
  }
}
