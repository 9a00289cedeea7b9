package ca.helu.pallas.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Min;

/** What the models can do; published in registry entries and used to accept or refuse images. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ModelCapabilities(
    @JsonPropertyDescription("Whether the model accepts images. Default false.") Boolean vision,
    @JsonPropertyDescription("Context window in tokens. Default 131072.") @Min(1)
        Integer contextWindow,
    @JsonPropertyDescription("Maximum output tokens. Default 16384.") @Min(1)
        Integer maxOutputTokens) {

  public static final int DEFAULT_CONTEXT_WINDOW = 131072;
  public static final int DEFAULT_MAX_OUTPUT_TOKENS = 16384;

  public boolean effectiveVision() {
    return vision != null && vision;
  }

  public int effectiveContextWindow() {
    return contextWindow == null ? DEFAULT_CONTEXT_WINDOW : contextWindow;
  }

  public int effectiveMaxOutputTokens() {
    return maxOutputTokens == null ? DEFAULT_MAX_OUTPUT_TOKENS : maxOutputTokens;
  }
}
