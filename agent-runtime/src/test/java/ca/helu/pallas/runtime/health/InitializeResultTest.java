package ca.helu.pallas.runtime.health;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class InitializeResultTest {
  @Test
  void anInitializeResultIsRecognisedInJsonAndInSse() {
    String result =
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":\"2025-06-18\"}}";
    assertThat(InitializeProbe.isInitializeResult(result)).isTrue();
    assertThat(InitializeProbe.isInitializeResult("event: message\ndata: " + result + "\n\n"))
        .isTrue();
    // the words alone are not a result
    assertThat(
            InitializeProbe.isInitializeResult(
                "{\"error\":{\"message\":\"no \\\"result\\\" and no \\\"protocolVersion\\\"\"}}"))
        .isFalse();
    assertThat(InitializeProbe.isInitializeResult("<html>result protocolVersion</html>")).isFalse();
  }

  @Test
  void theHealthReportIsJsonWithItsKeysInOrder() {
    String json = HealthMonitor.render("degraded", "Unreachable: \"argos\"\n").json();
    assertThat(json)
        .startsWith("{\"status\":\"degraded\",\"timestamp\":\"")
        .endsWith(",\"message\":\"Unreachable: \\\"argos\\\"\\n\"}");
  }
}
