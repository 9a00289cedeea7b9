package ca.helu.pallas.runtime.serve;

import ca.helu.pallas.api.AgentSpec;
import ca.helu.pallas.api.PallasDeploymentSpec;
import ca.helu.pallas.runtime.downstream.McpToolServers;

/** Creates an agent's parts; {@code peers} says how it reaches the other agents it calls. */
public interface AgentPartsFactory {
  AgentParts create(PallasDeploymentSpec spec, AgentSpec agent, McpToolServers.Peers peers);

  /** The clients of servers and agents, with this factory's secrets (the registry's calls). */
  McpToolServers toolServers();
}
