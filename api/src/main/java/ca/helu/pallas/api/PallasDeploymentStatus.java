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
            "Ready, Progressing, Degraded and Verified, at most one of each type, each with a"
                + " reason from docs/status.md.")
        List<Condition> conditions,
    @JsonPropertyDescription("URL of the registry's server.json inside the cluster.")
        String registryUrl,
    @JsonPropertyDescription("Agents ready / agents, e.g. 2/3 (for kubectl get).")
        String agentsReady,
    @JsonPropertyDescription("Per-agent endpoint, readiness and MCP handshake.")
        List<AgentStatus> agents) {

  /**
   * One agent's endpoint and readiness, the agents it still waits for, and what its MCP endpoint
   * answered the operator's handshake (docs/status.md, "Verified").
   */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public record AgentStatus(
      @JsonPropertyDescription("The agent's name.") String name,
      @JsonPropertyDescription("Its MCP endpoint inside the cluster.") String url,
      @JsonPropertyDescription("Pods that pass /readyz.") Integer readyReplicas,
      @JsonPropertyDescription("Pods wanted.") Integer replicas,
      @JsonPropertyDescription(
              "Agents that must be available before this one starts and are not yet.")
          List<String> waitingFor,
      @JsonPropertyDescription(
              "Verified: whether its MCP endpoint answered the operator's initialize and"
                  + " tools/list, with a reason from docs/status.md.")
          List<Condition> conditions,
      @JsonPropertyDescription("The serverInfo its initialize answered.") ServerInfo serverInfo,
      @JsonPropertyDescription("The MCP protocol version its initialize answered.")
          String protocolVersion,
      @JsonPropertyDescription("The names of the tools its tools/list answered (at most 64).")
          List<String> tools) {

    /** An agent's status before any handshake: endpoint, readiness and waits only. */
    public AgentStatus(
        String name, String url, Integer readyReplicas, Integer replicas, List<String> waitingFor) {
      this(name, url, readyReplicas, replicas, waitingFor, null, null, null, null);
    }
  }

  /** The name and version an MCP server gives in its initialize result. */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public record ServerInfo(
      @JsonPropertyDescription("serverInfo.name") String name,
      @JsonPropertyDescription("serverInfo.version") String version) {}
}
