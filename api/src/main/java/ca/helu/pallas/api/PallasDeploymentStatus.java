package ca.helu.pallas.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.kubernetes.api.model.Condition;
import java.util.List;

/** Observed state of a PallasDeployment, written by the operator (docs/status.md). */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record PallasDeploymentStatus(
    @JsonPropertyDescription("The generation this status describes.") Long observedGeneration,
    @JsonPropertyDescription(
            "Ready, Progressing and Degraded, each with a reason from docs/status.md.")
        List<Condition> conditions,
    @JsonPropertyDescription("URL of the registry's server.json inside the cluster.")
        String registryUrl,
    @JsonPropertyDescription("Agents ready / agents, e.g. 2/3 (for kubectl get).")
        String agentsReady,
    @JsonPropertyDescription("Per-agent endpoint and readiness.") List<AgentStatus> agents) {

  /** One agent's endpoint and readiness, and the agents it still waits for. */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public record AgentStatus(
      @JsonPropertyDescription("The agent's name.") String name,
      @JsonPropertyDescription("Its MCP endpoint inside the cluster.") String url,
      @JsonPropertyDescription("Pods that pass /readyz.") Integer readyReplicas,
      @JsonPropertyDescription("Pods wanted.") Integer replicas,
      @JsonPropertyDescription(
              "Agents that must be available before this one starts and are not yet.")
          List<String> waitingFor) {}
}
