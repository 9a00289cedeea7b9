package ca.helu.pallas.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Max;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Required;

/**
 * An agent's HorizontalPodAutoscaler (Kubernetes): pods added or removed to keep the average of
 * {@code send_message} calls in flight per pod near a target (docs/operations.md, "Scaling").
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record AutoscalingSpec(
    @JsonPropertyDescription("Fewest pods. Default 1.") @Min(1) @Max(MAX_REPLICAS)
        Integer minReplicas,
    @JsonPropertyDescription("Most pods.") @Required @Min(1) @Max(MAX_REPLICAS) Integer maxReplicas,
    @JsonPropertyDescription(
            "Average send_message calls in flight per pod that the autoscaler aims for (metric"
                + " pallas_send_message_in_flight, served by a custom-metrics adapter). Default "
                + DEFAULT_TARGET_IN_FLIGHT_CALLS
                + ".")
        @Min(1)
        @Max(MAX_TARGET_IN_FLIGHT_CALLS)
        Integer targetInFlightCalls) {

  public static final int MAX_REPLICAS = 1000;
  public static final int DEFAULT_TARGET_IN_FLIGHT_CALLS = 10;
  public static final int MAX_TARGET_IN_FLIGHT_CALLS = 100_000;

  public int effectiveMinReplicas() {
    return minReplicas == null ? 1 : minReplicas;
  }

  public int effectiveTargetInFlightCalls() {
    return targetInFlightCalls == null ? DEFAULT_TARGET_IN_FLIGHT_CALLS : targetInFlightCalls;
  }
}
