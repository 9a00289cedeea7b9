package ca.helu.pallas.runtime.llm;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ModelListingTest {
  @Test
  void aModelIsListedOnlyAsAnId() {
    String models = "{\"object\":\"list\",\"data\":[{\"id\":\"qwen3-8b\",\"owned_by\":\"m\"}]}";
    assertThat(ProviderPreflight.listsModel(models, "qwen3-8b")).isTrue();
    assertThat(ProviderPreflight.listsModel(models, "m")).isFalse();
    assertThat(ProviderPreflight.listsModel(models, "qwen3")).isFalse();
    assertThat(ProviderPreflight.listsModel("\"qwen3-8b\"", "qwen3-8b")).isFalse();
  }
}
