package ca.helu.pallas.operator.verify;

import ca.helu.pallas.api.AgentSpec;
import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.api.PallasNames;
import java.net.URI;

/**
 * Where the operator asks an agent's MCP endpoint. In a cluster, the agent's Service by its DNS
 * name ({@link #SERVICE}), as the agents call each other, whatever {@code spec.host} says; tests
 * whose agents run as local processes give their own address.
 */
@FunctionalInterface
public interface AgentEndpoints {
  /** The agent Service's MCP URL: {@code http://X-a.N.svc:<port>/mcp}. */
  AgentEndpoints SERVICE = (fleet, agent) -> URI.create(PallasNames.peerUrl(fleet, agent));

  URI of(PallasDeployment fleet, AgentSpec agent);
}
