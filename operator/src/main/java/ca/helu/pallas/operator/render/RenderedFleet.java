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
 * @param agents each agent's pod inputs, in manifest order
 * @param registry the registry pod's inputs
 * @param missingSecrets Secrets or keys that do not exist, each naming the field that uses it
 */
public record RenderedFleet(
    PallasDeployment primary,
    String manifestYaml,
    Map<String, String> inlineSecretData,
    Map<String, AgentPod> agents,
    RegistryPod registry,
    List<String> missingSecrets) {

  public String name() {
    return primary.getMetadata().getName();
  }

  public String namespace() {
    return primary.getMetadata().getNamespace();
  }
}
