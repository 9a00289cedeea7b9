package ca.helu.pallas.runtime.llm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.langchain4j.exception.HttpException;
import java.net.ConnectException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/** The provider retry policy, without a network: attempts, backoff and what is retried. */
class RetryTest {
  private final Retry retry = new Retry(3, Duration.ofMillis(500), Duration.ofSeconds(10));
  private final List<Duration> slept = new ArrayList<>();
  private final List<Integer> retried = new ArrayList<>();

  private <T> T run(Supplier<T> attempt) {
    return retry.run(attempt, ProviderModel::retryable, (n, e) -> retried.add(n), slept::add);
  }

  @Test
  void aRetryableFailureIsRetriedWithDoublingBackoff() {
    AtomicInteger calls = new AtomicInteger();
    String answer =
        run(() -> {
          if (calls.incrementAndGet() < 3) {
            throw new HttpException(503, "busy");
          }
          return "ok";
        });
    assertThat(answer).isEqualTo("ok");
    assertThat(calls).hasValue(3);
    assertThat(slept).containsExactly(Duration.ofMillis(500), Duration.ofMillis(1000));
    assertThat(retried).containsExactly(1, 2);
  }

  @Test
  void theLastFailureIsThrownWhenTheAttemptsAreUsedUp() {
    AtomicInteger calls = new AtomicInteger();
    assertThatThrownBy(() ->
            run(() -> {
              calls.incrementAndGet();
              throw new HttpException(429, "slow down");
            }))
        .isInstanceOf(HttpException.class)
        .hasMessage("slow down");
    assertThat(calls).hasValue(3);
    assertThat(slept).hasSize(2);
  }

  @Test
  void clientErrorsAreNotRetried() {
    for (int status : List.of(400, 401, 403, 404)) {
      AtomicInteger calls = new AtomicInteger();
      assertThatThrownBy(() ->
              run(() -> {
                calls.incrementAndGet();
                throw new HttpException(status, "no");
              }))
          .isInstanceOf(HttpException.class);
      assertThat(calls).as("HTTP %d", status).hasValue(1);
    }
    assertThat(slept).isEmpty();
  }

  @Test
  void whatIsRetryable() {
    assertThat(ProviderModel.retryable(new HttpException(429, ""))).isTrue();
    assertThat(ProviderModel.retryable(new HttpException(408, ""))).isTrue();
    assertThat(ProviderModel.retryable(new HttpException(502, ""))).isTrue();
    assertThat(ProviderModel.retryable(new HttpException(422, ""))).isFalse();
    assertThat(ProviderModel.retryable(new RuntimeException(new ConnectException())))
        .as("connection refused")
        .isTrue();
  }
}
