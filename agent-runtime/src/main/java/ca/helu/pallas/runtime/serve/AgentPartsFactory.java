package ca.helu.pallas.runtime.serve;

import ca.helu.pallas.api.AgentSpec;
import ca.helu.pallas.api.PallasDeploymentSpec;

/** Creates an agent's parts; {@code peers} gives the MCP URL of other agents it calls. */
@FunctionalInterface
public interface AgentPartsFactory {
  AgentParts create(PallasDeploymentSpec spec, AgentSpec agent, PeerUrls peers);

  /** Where an agent reaches another agent's /mcp. */
  @FunctionalInterface
  interface PeerUrls {
    String of(AgentSpec peer);
  }
}
