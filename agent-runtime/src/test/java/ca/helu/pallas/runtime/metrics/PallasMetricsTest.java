package ca.helu.pallas.runtime.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class PallasMetricsTest {
  @Test
  void seedMetricNamesTypesAndLabels() {
    PallasMetrics m = new PallasMetrics();
    m.bindJvmMetrics();
    m.agentInfo("research", 23031);
    m.sendMessage("research", true, Duration.ofMillis(120));
    m.sendMessage("research", false, Duration.ofMillis(5));
    m.llmTurn("research", "qwen3", Map.of("input", 10L, "output", 4L));
    m.toolCall("research", "argos", "tool", false, Duration.ofMillis(30));
    m.downstreamUp("research", "argos", false);
    m.providerUp("openai", true);
    m.healthStatus("research", 0.5);
    m.connections("research", () -> 3);
    String text = m.scrape();

    assertThat(text)
        .contains("# TYPE pallas_up gauge", "pallas_up 1.0")
        .contains("# TYPE pallas_agent_info gauge")
        .containsPattern("pallas_agent_info\\{agent=\"research\",port=\"23031\"} 1(\\.0)?\n")
        .contains("# TYPE pallas_send_message_total counter")
        .contains("pallas_send_message_total{agent=\"research\",outcome=\"ok\"} 1.0")
        .contains("pallas_send_message_total{agent=\"research\",outcome=\"error\"} 1.0")
        .contains("# TYPE pallas_send_message_duration_seconds histogram")
        .contains("pallas_send_message_duration_seconds_bucket{agent=\"research\",le=\"0.25\"} 2")
        .contains("pallas_send_message_duration_seconds_count{agent=\"research\"} 2")
        .contains("pallas_llm_turns_total{agent=\"research\",model=\"qwen3\"} 1.0")
        .contains("pallas_llm_tokens_total{agent=\"research\",kind=\"input\",model=\"qwen3\"} 10.0")
        .contains("pallas_llm_tokens_total{agent=\"research\",kind=\"output\",model=\"qwen3\"} 4.0")
        .contains(
            "pallas_tool_calls_total{agent=\"research\",operation=\"tool\",outcome=\"error\",server=\"argos\"} 1.0")
        .contains("# TYPE pallas_tool_call_duration_seconds histogram")
        .contains("pallas_downstream_up{agent=\"research\",server=\"argos\"} 0.0")
        .contains("pallas_llm_provider_up{provider=\"openai\"} 1.0")
        .contains("pallas_agent_health_status{agent=\"research\"} 0.5")
        .contains("# TYPE pallas_http_connections gauge")
        .contains("pallas_http_connections{agent=\"research\"} 3.0")
        .contains("jvm_memory_used_bytes", "process_cpu_usage", "process_files_open_files");
  }
}
