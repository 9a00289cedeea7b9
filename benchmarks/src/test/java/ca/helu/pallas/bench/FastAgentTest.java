package ca.helu.pallas.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class FastAgentTest {
  @Test
  void theConfigSelectsPassthroughAndPrintsNothingPerCall() {
    String config = FastAgent.config();

    assertThat(config).contains("default_model: passthrough");
    assertThat(config).contains("progress_display: false", "show_chat: false", "show_tools: false");
  }

  @Test
  void servesOneRequestScopedAgentOverHttpOnLoopback() {
    List<String> command =
        FastAgent.serveCommand(
            Path.of("/venv"), Path.of("/w/fastagent.config.yaml"), Path.of("/w/home"), 8123);

    assertThat(command.get(0)).isEqualTo("/venv/bin/fast-agent");
    assertThat(command.get(1)).isEqualTo("serve");
    assertThat(String.join(" ", command))
        .contains("--config-path /w/fastagent.config.yaml")
        .contains("--model passthrough")
        .contains("--transport http")
        .contains("--host 127.0.0.1")
        .contains("--port 8123")
        .contains("--instance-scope request")
        .contains("--home /w/home");
  }

  @Test
  void onlyPython312OrLaterIsUsed() {
    assertThat(FastAgent.pythonAtLeast312("3.12.1")).isTrue();
    assertThat(FastAgent.pythonAtLeast312("3.13")).isTrue();
    assertThat(FastAgent.pythonAtLeast312("4.0.0")).isTrue();
    assertThat(FastAgent.pythonAtLeast312("3.11.7")).isFalse();
    assertThat(FastAgent.pythonAtLeast312("2.7.18")).isFalse();
    assertThat(FastAgent.pythonAtLeast312("garbage")).isFalse();
  }
}
