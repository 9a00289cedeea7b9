package ca.helu.pallas.runtime.llm;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Reading a provider's Retry-After (RFC 9110, 10.2.3) and OpenAI's retry-after-ms. */
class RetryAfterTest {
  private static final Instant NOW = Instant.parse("2026-11-24T12:00:00Z");

  private static Optional<Duration> of(String name, String value) {
    return RetryAfter.of(Map.of(name, List.of(value)), NOW);
  }

  @Test
  void secondsAreReadWhateverTheHeadersCase() {
    assertThat(of("Retry-After", "2")).contains(Duration.ofSeconds(2));
    assertThat(of("retry-after", " 120 ")).contains(Duration.ofSeconds(120));
    assertThat(of("Retry-After", "0")).contains(Duration.ZERO);
  }

  @Test
  void anHttpDateIsTheTimeLeftUntilIt() {
    assertThat(of("Retry-After", "Tue, 24 Nov 2026 12:00:30 GMT")).contains(Duration.ofSeconds(30));
    assertThat(of("Retry-After", "Tue, 24 Nov 2026 11:59:00 GMT"))
        .as("a date past")
        .contains(Duration.ZERO);
  }

  @Test
  void millisecondsWinOverSeconds() {
    Map<String, List<String>> both =
        Map.of("retry-after", List.of("3"), "retry-after-ms", List.of("1500.5"));
    assertThat(RetryAfter.of(both, NOW)).contains(Duration.ofNanos(1_500_500_000));
  }

  @Test
  void whatIsNotAWaitIsIgnored() {
    assertThat(of("Retry-After", "soon")).isEmpty();
    assertThat(of("Retry-After", "-5")).isEmpty();
    assertThat(of("retry-after-ms", "NaN")).isEmpty();
    assertThat(RetryAfter.of(Map.of(), NOW)).isEmpty();
  }

  @Test
  void aWaitLongerThanADayIsADay() {
    assertThat(of("Retry-After", "999999999999")).contains(RetryAfter.MAX);
  }
}
