package ca.helu.pallas.runtime.llm;

import static org.assertj.core.api.Assertions.assertThat;

import dev.langchain4j.exception.HttpException;
import java.net.ConnectException;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The provider retry policy: what is retried, and the bound of one attempt. */
class RetryTest {
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

  @Test
  void theAttemptTimeoutIsChangedAlone() {
    Retry longer = Retry.DEFAULT.withTimeout(Duration.ofSeconds(300));
    assertThat(longer.timeout()).isEqualTo(Duration.ofSeconds(300));
    assertThat(longer.attempts()).isEqualTo(Retry.DEFAULT.attempts());
    assertThat(longer.backoff()).isEqualTo(Retry.DEFAULT.backoff());
  }
}
