package ca.helu.pallas.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;

/** Sampling parameters sent to the model, and the agent loop's own limits. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record RequestParams(
    @JsonPropertyDescription("Sampling temperature, 0-2. Dropped for models that reject it.")
        @Min(0)
        @Max(2)
        Double temperature,
    @JsonPropertyDescription("Nucleus sampling, 0-1. Dropped for models that reject it.")
        @Min(value = 0, inclusive = false)
        @Max(1)
        Double topP,
    @JsonPropertyDescription("Top-k sampling, >= 1. Dropped for providers that reject it.") @Min(1)
        Integer topK,
    @JsonPropertyDescription("Maximum output tokens per LLM turn.") @Min(1) Integer maxTokens,
    @JsonPropertyDescription("Maximum LLM turns in one send_message. Default 20.")
        @Min(1)
        @Max(1000)
        Integer maxIterations,
    @JsonPropertyDescription("Run a turn's tool calls in parallel. Default true.")
        Boolean parallelToolCalls,
    @JsonPropertyDescription(
            "Tool calls of one LLM answer in flight at once when they run in parallel; the rest"
                + " wait for a free place. Default 16.")
        @Min(1)
        @Max(1000)
        Integer maxParallelToolCalls,
    @JsonPropertyDescription("Keep and send the conversation history. Default true.")
        Boolean useHistory) {

  public static final int DEFAULT_MAX_ITERATIONS = 20;

  /**
   * Above the handful of parallel tool calls models put in one answer, so normal answers run all at
   * once as before; a runaway answer with hundreds runs 16 at a time (docs/runtime.md, Limits).
   */
  public static final int DEFAULT_MAX_PARALLEL_TOOL_CALLS = 16;

  public static final RequestParams DEFAULTS =
      new RequestParams(null, null, null, null, null, null, null, null);

  public int effectiveMaxIterations() {
    return maxIterations == null ? DEFAULT_MAX_ITERATIONS : maxIterations;
  }

  public boolean effectiveParallelToolCalls() {
    return parallelToolCalls == null || parallelToolCalls;
  }

  public int effectiveMaxParallelToolCalls() {
    return maxParallelToolCalls == null ? DEFAULT_MAX_PARALLEL_TOOL_CALLS : maxParallelToolCalls;
  }

  public boolean effectiveUseHistory() {
    return useHistory == null || useHistory;
  }
}
