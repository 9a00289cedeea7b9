package ca.helu.pallas.operator.render;

import ca.helu.pallas.api.AgentSpec;
import io.fabric8.kubernetes.api.model.EnvVar;
import java.util.List;
import java.util.Set;

/**
 * What one agent's pods need beyond the shared manifest.
 *
 * @param agent the agent
 * @param port its listen and Service port
 * @param env one variable per Secret key it uses, filled from the Secret
 * @param configHash digest of everything the pod reads, so a change rolls exactly these pods
 * @param dependencies agents that must be available before its pods first start
 */
public record AgentPod(
    AgentSpec agent, int port, List<EnvVar> env, String configHash, Set<String> dependencies) {}
