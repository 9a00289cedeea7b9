package ca.helu.pallas.runtime.serve;

import ca.helu.pallas.api.AgentSpec;
import ca.helu.pallas.api.PallasDeploymentSpec;
import ca.helu.pallas.runtime.downstream.McpToolServers;

/** Creates an agent's parts; {@code peers} gives the MCP URL of other agents it calls. */
public interface AgentPartsFactory {
  AgentParts create(PallasDeploymentSpec spec, AgentSpec agent, PeerUrls peers);

  /** The clients of servers and agents, with this factory's secrets (the registry's calls). */
  McpToolServers toolServers();

  /** Where an agent reaches another agent's /mcp. */
  @FunctionalInterface
  interface PeerUrls {
    String of(AgentSpec peer);
  }
}
