package ca.helu.pallas.runtime.health;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The providers' checks: run at start, repeated every period, the latest kept per model. */
class ProviderHealthTest {
  private final Map<String, Boolean> up = new ConcurrentHashMap<>();

  @Test
  void everyModelIsCheckedAtStartAndItsProviderReported() {
    try (ProviderHealth health = new ProviderHealth(up::put)) {
      health.start(
          List.of(
              new ProviderHealth.Target("openai.a", "openai", () -> CheckResult.ok("listed")),
              new ProviderHealth.Target(
                  "anthropic.b", "anthropic", () -> CheckResult.failed("HTTP 404"))),
          Duration.ofMinutes(5));
      assertThat(health.latest("openai.a").ok()).isTrue();
      assertThat(health.latest("anthropic.b").message()).isEqualTo("HTTP 404");
      assertThat(health.latest("openai.other")).isNull();
      assertThat(up).containsExactlyInAnyOrderEntriesOf(Map.of("openai", true, "anthropic", false));
    }
  }

  @Test
  void aProviderThatComesBackIsSeenAtTheNextCheck() {
    AtomicBoolean reachable = new AtomicBoolean(false);
    AtomicInteger checks = new AtomicInteger();
    try (ProviderHealth health = new ProviderHealth(up::put)) {
      health.start(
          List.of(
              new ProviderHealth.Target(
                  "openai.a",
                  "openai",
                  () -> {
                    checks.incrementAndGet();
                    return reachable.get()
                        ? CheckResult.ok("listed")
                        : CheckResult.failed("unreachable");
                  })),
          Duration.ofMillis(50));
      assertThat(health.latest("openai.a").ok()).isFalse();
      reachable.set(true);
      await()
          .atMost(Duration.ofSeconds(5))
          .untilAsserted(() -> assertThat(health.latest("openai.a").ok()).isTrue());
      assertThat(up).containsEntry("openai", true);
      assertThat(checks).hasValueGreaterThan(1);
    }
  }
}
