package ca.helu.pallas.operator.render;

import ca.helu.pallas.api.PallasNames;
import ca.helu.pallas.api.PodGroupSpec;
import ca.helu.pallas.api.PodSettingsSpec;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.ResourceRequirements;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One Deployment of agent pods: an agent in a pod of its own, or the agents of a pod group, which
 * one process serves (docs/operator.md, "Agents sharing a pod").
 *
 * @param name the Deployment is {@code X-<name>}: the agent's, or the group's
 * @param group the pod group, or null for an agent in a pod of its own
 * @param agents the agents the pods serve, in manifest order
 * @param env every variable one of them needs (the union of their Secret keys)
 * @param configHash digest of what the pods read: a change to any of the agents rolls them
 * @param probePort where the pods answer the kubelet's probes: none of the agents' ports
 * @param dependencies agents of other pods that must be available before these pods first start
 * @param replicas pods wanted without an autoscaler
 * @param resources the container's resources from the spec (null: the operator's default)
 * @param settings the pods' settings: spec.pod under the agent's or the group's own
 */
public record FleetPod(
    String name,
    PodGroupSpec group,
    List<RenderedAgent> agents,
    List<EnvVar> env,
    String configHash,
    int probePort,
    Set<String> dependencies,
    int replicas,
    ResourceRequirements resources,
    PodSettingsSpec settings) {

  /** Whether the pods serve a pod group rather than one agent. */
  public boolean grouped() {
    return group != null;
  }

  /** The one agent of a pod of its own, else null. */
  public RenderedAgent alone() {
    return grouped() ? null : agents.get(0);
  }

  public List<String> agentNames() {
    return agents.stream().map(RenderedAgent::name).toList();
  }

  /** Selector of the pods (immutable once the Deployment exists). */
  public Map<String, String> selector(String deployment) {
    return grouped()
        ? PallasNames.podGroupSelector(deployment, name)
        : PallasNames.agentSelector(deployment, name);
  }

  public Map<String, String> labels(String deployment) {
    return grouped()
        ? PallasNames.podGroupLabels(deployment, name)
        : PallasNames.agentLabels(deployment, name);
  }

  /** Whether more than one pod may serve at once (a PodDisruptionBudget is wanted). */
  public boolean replicated() {
    return grouped() ? replicas > 1 : alone().agent().replicated();
  }
}
