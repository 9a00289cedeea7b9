package ca.helu.pallas.operator.dependent;

import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.api.PallasNames;
import ca.helu.pallas.operator.OperatorConfig;
import ca.helu.pallas.operator.render.RenderedFleet;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.CRUDKubernetesDependentResource;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;
import java.util.List;

/**
 * Deployment {@code X-registry} running {@code registry --config-map X-config}: it follows the
 * ConfigMap through the API under its own ServiceAccount, so a spec change shows in server.json
 * within seconds and without a restart (docs/operator.md). What it reads once at start (the
 * headers' Secret keys of the servers its call_tool calls, the static tokens, {@code spec.auth})
 * rolls it through the hash on its pod template.
 */
@KubernetesDependent(informer = @Informer(labelSelector = Selectors.REGISTRY))
public class RegistryDeploymentDependentResource
    extends CRUDKubernetesDependentResource<Deployment, PallasDeployment> {

  public RegistryDeploymentDependentResource() {
    super(Deployment.class);
  }

  @Override
  protected Deployment desired(PallasDeployment primary, Context<PallasDeployment> context) {
    return desired(Fleets.fleet(context), Fleets.config(context));
  }

  /** The command line the agent-runtime image runs for the registry. */
  public static List<String> args(RenderedFleet fleet) {
    return List.of(
        "registry",
        "--config-map",
        PallasNames.configMap(fleet.name()),
        "--namespace",
        fleet.namespace());
  }

  static Deployment desired(RenderedFleet fleet, OperatorConfig config) {
    String name = PallasNames.registryObject(fleet.name());
    int port = fleet.primary().getSpec().effectiveRegistry().effectivePort();
    Deployment deployment =
        new DeploymentBuilder()
            .withMetadata(Owners.metadata(fleet, name, PallasNames.registryLabels(fleet.name())))
            .withNewSpec()
            .withReplicas(1)
            .withRevisionHistoryLimit(3)
            .withNewSelector()
            .withMatchLabels(PallasNames.registrySelector(fleet.name()))
            .endSelector()
            .withNewTemplate()
            .withNewMetadata()
            .withLabels(PallasNames.registryLabels(fleet.name()))
            .addToAnnotations(PallasNames.CONFIG_HASH_ANNOTATION, fleet.registry().configHash())
            .endMetadata()
            .withNewSpec()
            .withServiceAccountName(name)
            .withAutomountServiceAccountToken(true)
            .withEnableServiceLinks(false)
            .withSecurityContext(Pods.podSecurity())
            .withImagePullSecrets(Pods.pullSecrets(config))
            .addNewContainer()
            .withName("registry")
            .withImage(config.runtimeImage())
            .withImagePullPolicy(config.imagePullPolicy())
            .withArgs(args(fleet))
            .withPorts(Pods.port(port))
            .withResources(Pods.resources(null))
            .withReadinessProbe(Pods.readiness(PallasNames.PORT_NAME))
            .withLivenessProbe(Pods.liveness(PallasNames.PORT_NAME))
            .withStartupProbe(Pods.startup(PallasNames.PORT_NAME))
            .withSecurityContext(Pods.containerSecurity())
            .withEnv(Pods.registryEnv(fleet))
            .withVolumeMounts(Pods.registryMounts(fleet))
            .endContainer()
            .withVolumes(Pods.registryVolumes(fleet))
            .endSpec()
            .endTemplate()
            .endSpec()
            .build();
    // the fleet-wide spec.pod; the registry keeps its ServiceAccount, which may read the ConfigMap
    deployment
        .getSpec()
        .setTemplate(
            Pods.withSettings(
                deployment.getSpec().getTemplate(),
                fleet.primary().getSpec().effectivePod(),
                true));
    return deployment;
  }
}
