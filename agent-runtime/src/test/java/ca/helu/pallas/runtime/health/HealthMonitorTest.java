package ca.helu.pallas.runtime.health;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class HealthMonitorTest {
  @Test
  void rendersSeed000JsonWithEscapedMessages() {
    assertThat(HealthMonitor.render("ok", "").json())
        .matches(
            "\\{\"status\":\"ok\",\"timestamp\":\"\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ\"}");
    assertThat(HealthMonitor.render("degraded", "a \"b\"\n").json())
        .endsWith(",\"message\":\"a \\\"b\\\"\\n\"}");
    assertThat(HealthMonitor.render("degraded", "x").gaugeValue()).isEqualTo(0.5);
  }

  @Test
  void anAgentThatCannotWorkReportsError() {
    try (HealthMonitor m =
        new HealthMonitor(
            List.of(),
            (url, headers) -> CheckResult.failed("not probed"),
            "anthropic",
            () -> CheckResult.ok("fine"),
            (s, up) -> {},
            Duration.ofSeconds(60),
            "no API key for anthropic: set environment variable X")) {
      assertThat(m.report().status()).isEqualTo("error");
      assertThat(m.report().json())
          .contains("\"message\":\"no API key for anthropic: set environment variable X\"");
      assertThat(m.report().gaugeValue()).isZero();
    }
  }

  @Test
  void providerFailureDegradesWithSeed001sMessage() {
    try (HealthMonitor m =
        new HealthMonitor(
            List.of(),
            (url, headers) -> CheckResult.failed("not probed"),
            "openai",
            () -> CheckResult.failed("model 'bad-model' not found"),
            (s, up) -> {},
            Duration.ofSeconds(60),
            null)) {
      assertThat(m.report().json())
          .contains("\"status\":\"degraded\"")
          .contains("\"message\":\"LLM: openai: model 'bad-model' not found\"");
    }
  }

  @Test
  void watchersHearOfEachCheckThatFlipsAndNotOfResultsThatConfirm() {
    AtomicBoolean up = new AtomicBoolean(true);
    CallHealth calls = new CallHealth();
    List<Boolean> told = new CopyOnWriteArrayList<>();
    AtomicInteger probes = new AtomicInteger();
    try (HealthMonitor m =
        new HealthMonitor(
            List.of(new HealthMonitor.Target("tools", "http://127.0.0.1:1/mcp", Map.of(), calls)),
            (url, headers) -> up.get() ? CheckResult.ok("up") : CheckResult.failed("down"),
            "openai",
            () -> CheckResult.ok("fine"),
            (s, ok) -> probes.incrementAndGet(),
            Duration.ofMinutes(10),
            null)) {
      // the first tick may tell before this watcher is added: only a flip must never be told
      m.watch(told::add);
      await().atMost(Duration.ofSeconds(5)).until(() -> probes.get() == 1);
      assertThat(told).as("the first probe confirms the server is up").doesNotContain(true);

      up.set(false);
      // a probe still finishing is not started again: refresh until one has run
      await().atMost(Duration.ofSeconds(5)).until(() -> refreshed(m, told));
      assertThat(m.current().status()).isEqualTo("degraded");

      told.clear();
      up.set(true);
      await().atMost(Duration.ofSeconds(5)).until(() -> refreshed(m, told));
      assertThat(m.current().status()).isEqualTo("ok");

      told.clear();
      calls.failed("reset");
      assertThat(told).as("a failing call makes the server failing at once").containsExactly(true);
      calls.failed("reset again");
      assertThat(told).as("still failing: no news").containsExactly(true);
      calls.answered();
      assertThat(told).as("well again").containsExactly(true, true);

      told.clear();
      m.providerFlipped();
      assertThat(told).containsExactly(true);
    }
  }

  @Test
  void aWatcherThatFailsStopsNeitherTheOthersNorTheCallThatFlippedACheck() {
    CallHealth calls = new CallHealth();
    List<Boolean> told = new CopyOnWriteArrayList<>();
    try (HealthMonitor m =
        new HealthMonitor(
            List.of(new HealthMonitor.Target("tools", "http://127.0.0.1:1/mcp", Map.of(), calls)),
            (url, headers) -> CheckResult.ok("up"),
            "openai",
            () -> CheckResult.ok("fine"),
            (s, ok) -> {},
            Duration.ofMinutes(10),
            null)) {
      m.watch(flipped -> {
        throw new IllegalStateException("broken watcher");
      });
      m.watch(told::add);
      calls.failed("reset");
      assertThat(told).contains(true);
    }
  }

  private static boolean refreshed(HealthMonitor m, List<Boolean> told) {
    m.refresh();
    return told.contains(true);
  }
}
