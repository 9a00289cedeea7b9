package ca.helu.pallas.operator.render;

import ca.helu.pallas.api.AgentSpec;
import io.fabric8.kubernetes.api.model.EnvVar;
import java.util.List;
import java.util.Set;

/**
 * What one agent needs of the pods that serve it beyond the shared manifest; its pod ({@link
 * FleetPod}) is its own or its pod group's.
 *
 * @param agent the agent
 * @param port its listen and Service port
 * @param env one variable per Secret key it uses, filled from the Secret
 * @param configHash digest of everything it reads, so a change rolls exactly the pods that serve it
 * @param dependencies agents that must be available before it first starts
 */
public record RenderedAgent(
    AgentSpec agent, int port, List<EnvVar> env, String configHash, Set<String> dependencies) {

  public String name() {
    return agent.name();
  }
}
