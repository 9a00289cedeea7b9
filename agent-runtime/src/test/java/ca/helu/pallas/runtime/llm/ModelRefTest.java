package ca.helu.pallas.runtime.llm;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** How a manifest's model string names a provider and a model. */
class ModelRefTest {
  @Test
  void aProviderModelSplitsAtTheFirstDot() {
    assertThat(ModelRef.of("openai.gpt-4o")).isEqualTo(new ModelRef("openai", "gpt-4o"));
    assertThat(ModelRef.of("openai.qwen3.5-8b")).isEqualTo(new ModelRef("openai", "qwen3.5-8b"));
    assertThat(ModelRef.of("anthropic.claude-sonnet-4-5").key())
        .isEqualTo("anthropic.claude-sonnet-4-5");
  }

  @Test
  void aBuiltInModelIsItsOwnProvider() {
    assertThat(ModelRef.of("passthrough")).isEqualTo(new ModelRef("passthrough", "passthrough"));
    assertThat(ModelRef.of("slow").key()).isEqualTo("slow.slow");
  }
}
