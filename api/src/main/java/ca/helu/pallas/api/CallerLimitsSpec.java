package ca.helu.pallas.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;

/**
 * How much one caller may use one agent (docs/runtime.md, "Per-caller limits"): each limit
 * optional, counted per agent and per caller (the name inbound authentication gives it; without
 * inbound authentication every caller is one). A call past a limit is refused with JSON-RPC error
 * -32002 naming the limit and when to retry.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record CallerLimitsSpec(
    @JsonPropertyDescription("Calls of one caller running or queued at once.") @Min(1) @Max(100000)
        Integer concurrentCalls,
    @JsonPropertyDescription("Calls one caller may start per minute (a bucket refilled evenly).")
        @Min(1)
        @Max(1000000)
        Integer callsPerMinute,
    @JsonPropertyDescription(
            "LLM tokens (input and output) one caller's calls may spend per hour; a call that"
                + " overdraws it is finished, the next waits until the hour has refilled it.")
        @Min(1)
        Long llmTokensPerHour) {}
