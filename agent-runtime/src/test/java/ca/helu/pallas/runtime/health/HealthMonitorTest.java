package ca.helu.pallas.runtime.health;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
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
}
