package ca.helu.pallas.operator.dependent;

import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.api.PallasNames;
import ca.helu.pallas.operator.OperatorConfig;
import ca.helu.pallas.operator.render.AgentPod;
import ca.helu.pallas.operator.render.RenderedFleet;
import ca.helu.pallas.operator.render.StartGate;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.dependent.GarbageCollected;
import io.javaoperatorsdk.operator.processing.dependent.CRUDKubernetesBulkDependentResource;
import io.javaoperatorsdk.operator.processing.dependent.KubernetesBulkDependentResource;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependentResource;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * Per agent a Deployment {@code X-a} running {@code serve -f <manifest> --agent a --cluster}. An
 * agent's Deployment appears once the agents it depends on are available ({@link StartGate}); its
 * pod template carries the hash of what the pod reads, so a change rolls exactly its pods.
 */
@KubernetesDependent(informer = @Informer(labelSelector = Selectors.AGENTS))
public class AgentDeploymentsDependentResource
    extends KubernetesDependentResource<Deployment, PallasDeployment>
    implements CRUDKubernetesBulkDependentResource<Deployment, PallasDeployment>,
        KubernetesBulkDependentResource<Deployment, PallasDeployment>,
        GarbageCollected<PallasDeployment> {

  public AgentDeploymentsDependentResource() {
    super(Deployment.class);
  }

  /** Only agents' objects: the registry's of the same kind are another dependent's. */
  @Override
  public Predicate<Deployment> secondaryResourceFilter(
      PallasDeployment primary, Context<PallasDeployment> context) {
    return Selectors::isAgent;
  }

  @Override
  public Map<ResourceID, Deployment> desiredResources(
      PallasDeployment primary, Context<PallasDeployment> context) {
    return desired(Fleets.fleet(context), Fleets.gate(context), Fleets.config(context));
  }

  static Map<ResourceID, Deployment> desired(
      RenderedFleet fleet, StartGate gate, OperatorConfig config) {
    Map<ResourceID, Deployment> deployments = new LinkedHashMap<>();
    for (AgentPod pod : fleet.agents().values()) {
      if (gate.startable().contains(pod.agent().name())) {
        Deployment deployment = desired(fleet, pod, config);
        deployments.put(ResourceID.fromResource(deployment), deployment);
      }
    }
    return deployments;
  }

  /** The command line the agent-runtime image runs for one agent (docs/operator.md). */
  public static List<String> args(String agent, int port, OperatorConfig config) {
    return List.of(
        "serve",
        "-f",
        PallasNames.CONFIG_FILE,
        "--agent",
        agent,
        "--cluster",
        "--drain-timeout",
        Integer.toString(config.drainSeconds()),
        "--probe-port",
        Integer.toString(PallasNames.probePort(port)));
  }

  static Deployment desired(RenderedFleet fleet, AgentPod pod, OperatorConfig config) {
    String agent = pod.agent().name();
    String name = PallasNames.agentObject(fleet.name(), agent);
    return new DeploymentBuilder()
        .withMetadata(Owners.metadata(fleet, name, PallasNames.agentLabels(fleet.name(), agent)))
        .withNewSpec()
        // with autoscaling the HorizontalPodAutoscaler owns replicas: left out of what is applied,
        // server-side apply neither resets nor claims them (docs/operator.md, "Scaling")
        .withReplicas(pod.agent().autoscaling() == null ? pod.agent().effectiveReplicas() : null)
        .withRevisionHistoryLimit(3)
        .withNewSelector()
        .withMatchLabels(PallasNames.agentSelector(fleet.name(), agent))
        .endSelector()
        // a new pod is ready before an old one goes, so the agent keeps serving during a rollout
        .withNewStrategy()
        .withType("RollingUpdate")
        .withNewRollingUpdate()
        .withMaxSurge(new IntOrString(1))
        .withMaxUnavailable(new IntOrString(0))
        .endRollingUpdate()
        .endStrategy()
        .withNewTemplate()
        .withNewMetadata()
        .withLabels(PallasNames.agentLabels(fleet.name(), agent))
        .addToAnnotations(PallasNames.CONFIG_HASH_ANNOTATION, pod.configHash())
        .endMetadata()
        .withNewSpec()
        .withAutomountServiceAccountToken(false)
        .withEnableServiceLinks(false)
        .withTerminationGracePeriodSeconds(
            (long) config.drainSeconds() + Pods.PRE_STOP_SECONDS + 10)
        .withSecurityContext(Pods.podSecurity())
        .withImagePullSecrets(Pods.pullSecrets(config))
        .addNewContainer()
        .withName("agent")
        .withImage(config.runtimeImage())
        .withImagePullPolicy(config.imagePullPolicy())
        .withArgs(args(agent, pod.port(), config))
        .withPorts(Pods.agentPorts(pod.port()))
        .withEnv(pod.env())
        .withResources(Pods.resources(pod.agent().resources()))
        .withReadinessProbe(Pods.readiness(PallasNames.PROBE_PORT_NAME))
        .withLivenessProbe(Pods.liveness(PallasNames.PROBE_PORT_NAME))
        .withStartupProbe(Pods.startup(PallasNames.PROBE_PORT_NAME))
        // Service endpoints drop the pod first, then SIGTERM starts the drain
        .withNewLifecycle()
        .withNewPreStop()
        .withNewSleep()
        .withSeconds((long) Pods.PRE_STOP_SECONDS)
        .endSleep()
        .endPreStop()
        .endLifecycle()
        .withSecurityContext(Pods.containerSecurity())
        .withVolumeMounts(Pods.mounts())
        .endContainer()
        .withVolumes(Pods.volumes(fleet.name()))
        .endSpec()
        .endTemplate()
        .endSpec()
        .build();
  }
}
