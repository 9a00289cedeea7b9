package ca.helu.pallas.operator.render;

import ca.helu.pallas.api.PallasDeployment;
import java.util.List;
import java.util.Map;

/**
 * A PallasDeployment rendered for the cluster: the manifest every pod reads (no secret value in
 * it), the inline secret values that go into an owned Secret instead, and each agent's pod inputs.
 * Computed once per reconcile by {@link FleetRenderer}; every dependent's {@code desired()} reads
 * it.
 *
 * @param primary the PallasDeployment as stored
 * @param manifestYaml the rendered manifest for ConfigMap {@code X-config}
 * @param inlineSecretData inline secret values by key, for Secret {@code X-inline}
 * @param agents what each agent needs of its pods, by name, in manifest order
 * @param pods the agents' Deployments, by pod name ({@link FleetPod}), in manifest order
 * @param registry the registry pod's inputs
 * @param missingSecrets Secrets or keys that do not exist, each naming the field that uses it
 */
public record RenderedFleet(
    PallasDeployment primary,
    String manifestYaml,
    Map<String, String> inlineSecretData,
    Map<String, RenderedAgent> agents,
    Map<String, FleetPod> pods,
    RegistryPod registry,
    List<String> missingSecrets) {

  /** The pod that serves an agent: its own, or its pod group's. */
  public FleetPod podOf(String agent) {
    return pods.values().stream()
        .filter(p -> p.agentNames().contains(agent))
        .findFirst()
        .orElseThrow(() -> new IllegalArgumentException("no agent " + agent));
  }

  public String name() {
    return primary.getMetadata().getName();
  }

  public String namespace() {
    return primary.getMetadata().getNamespace();
  }
}
