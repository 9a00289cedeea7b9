package ca.helu.pallas.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.kubernetes.api.model.Condition;
import java.util.List;

/** Observed state of a PallasDeployment, written by the operator. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record PallasDeploymentStatus(
    @JsonPropertyDescription("The generation this status describes.") Long observedGeneration,
    @JsonPropertyDescription("Ready and other conditions.") List<Condition> conditions,
    @JsonPropertyDescription("URL of the registry's server.json.") String registryUrl,
    @JsonPropertyDescription("Per-agent endpoint and readiness.") List<AgentStatus> agents) {

  /** One agent's endpoint and readiness. */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public record AgentStatus(String name, String url, Integer readyReplicas, Integer replicas) {}
}
