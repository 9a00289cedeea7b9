package ca.helu.pallas.operator.dependent;

import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.api.PallasNames;
import ca.helu.pallas.operator.OperatorConfig;
import ca.helu.pallas.operator.render.FleetPod;
import ca.helu.pallas.operator.render.RenderedFleet;
import ca.helu.pallas.operator.render.StartGate;
import io.fabric8.kubernetes.api.model.DeletionPropagation;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.ManagedFieldsEntry;
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
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * Per agent a Deployment {@code X-a} running {@code serve -f <manifest> --agent a --cluster}, or
 * per pod group {@code X-g} one serving every agent of the group ({@code --agent a --agent b};
 * docs/operator.md, "Agents sharing a pod"). A Deployment appears once the agents its agents depend
 * on in other pods are available ({@link StartGate}); its pod template carries the hash of what the
 * pods read, so a change rolls exactly the pods that serve the changed agent.
 */
@KubernetesDependent(informer = @Informer(labelSelector = Selectors.AGENTS))
public class AgentDeploymentsDependentResource
    extends KubernetesDependentResource<Deployment, PallasDeployment>
    implements CRUDKubernetesBulkDependentResource<Deployment, PallasDeployment>,
        KubernetesBulkDependentResource<Deployment, PallasDeployment>,
        GarbageCollected<PallasDeployment> {

  /** The field manager that holds an agent's replica count between the operator and its HPA. */
  static final String REPLICAS_HANDOVER = "pallas-operator-replicas-handover";

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
    for (FleetPod pod : fleet.pods().values()) {
      if (gate.startable(pod)) {
        Deployment deployment = desired(fleet, pod, config);
        deployments.put(ResourceID.fromResource(deployment), deployment);
      }
    }
    return deployments;
  }

  /**
   * Applies the Deployment; when it turns autoscaled, hands its replica count over first; when its
   * pods' selector changed, replaces it. An apply that leaves out a field its manager held removes
   * the field, and Kubernetes defaults replicas to 1: an agent of 3 pods would drop to 1 until the
   * autoscaler scaled it back. Another manager first applies the current count, so it survives the
   * operator letting go (Kubernetes' server-side apply documentation, "Transferring ownership");
   * the autoscaler's next scale takes it from there.
   */
  @Override
  public Deployment update(
      Deployment actual,
      Deployment desired,
      PallasDeployment primary,
      Context<PallasDeployment> context) {
    if (!actual.getSpec().getSelector().equals(desired.getSpec().getSelector())) {
      // the name passed from an agent's own pod to a pod group, or back (an agent g removed and a
      // group g added in one change): a Deployment's selector cannot change, so the old one goes
      // (its pods with it, in the background) and the new one is created in its place
      context
          .getClient()
          .resource(actual)
          .withPropagationPolicy(DeletionPropagation.BACKGROUND)
          .delete();
      return create(desired, primary, context);
    }
    if (desired.getSpec().getReplicas() == null
        && actual.getSpec().getReplicas() != null
        && holdsReplicas(actual, context.getControllerConfiguration().fieldManager())) {
      context
          .getClient()
          .resource(
              new DeploymentBuilder()
                  .withNewMetadata()
                  .withName(actual.getMetadata().getName())
                  .withNamespace(actual.getMetadata().getNamespace())
                  .endMetadata()
                  .withNewSpec()
                  .withReplicas(actual.getSpec().getReplicas())
                  .endSpec()
                  .build())
          .fieldManager(REPLICAS_HANDOVER)
          .forceConflicts()
          .serverSideApply();
    }
    return super.update(actual, desired, primary, context);
  }

  /** Whether the operator's own apply set the Deployment's replicas. */
  private static boolean holdsReplicas(Deployment actual, String fieldManager) {
    List<ManagedFieldsEntry> entries = actual.getMetadata().getManagedFields();
    return entries != null
        && entries.stream()
            .filter(e -> fieldManager.equals(e.getManager()) && "Apply".equals(e.getOperation()))
            .filter(e -> e.getFieldsV1() != null)
            .map(e -> e.getFieldsV1().getAdditionalProperties().get("f:spec"))
            .anyMatch(spec -> spec instanceof Map<?, ?> m && m.containsKey("f:replicas"));
  }

  /**
   * The command line the agent-runtime image runs for a pod's agents (docs/operator.md): one {@code
   * --agent} each.
   */
  public static List<String> args(FleetPod pod, OperatorConfig config) {
    List<String> args = new ArrayList<>(List.of("serve", "-f", PallasNames.CONFIG_FILE));
    pod.agentNames().forEach(agent -> args.addAll(List.of("--agent", agent)));
    args.addAll(
        List.of(
            "--cluster",
            "--drain-timeout",
            Integer.toString(config.drainSeconds()),
            "--probe-port",
            Integer.toString(pod.probePort())));
    return List.copyOf(args);
  }

  /**
   * The agent container's environment: its agents' Secret keys, and with {@code spec.auth} where
   * its identity is and which ServiceAccount the operator is (docs/runtime.md, "Agents calling
   * agents").
   */
  static List<EnvVar> env(RenderedFleet fleet, FleetPod pod, OperatorConfig config) {
    if (fleet.primary().getSpec().auth() == null) {
      return pod.env();
    }
    List<EnvVar> env = new ArrayList<>(pod.env());
    env.add(new EnvVar(Pods.IDENTITY_VARIABLE, PallasNames.IDENTITY_DIR, null));
    if (config.operatorAccount() != null) {
      env.add(new EnvVar(OPERATOR_SUBJECT_VARIABLE, config.operatorAccount().subject(), null));
    }
    return env;
  }

  /** The runtime's variable naming the operator's ServiceAccount (serve.PodIdentity). */
  static final String OPERATOR_SUBJECT_VARIABLE = "PALLAS_OPERATOR_SUBJECT";

  static Deployment desired(RenderedFleet fleet, FleetPod pod, OperatorConfig config) {
    String name = PallasNames.agentObject(fleet.name(), pod.name());
    boolean autoscaled = !pod.grouped() && pod.alone().agent().autoscaling() != null;
    Deployment deployment =
        new DeploymentBuilder()
            .withMetadata(Owners.metadata(fleet, name, pod.labels(fleet.name())))
            .withNewSpec()
            // with autoscaling the HorizontalPodAutoscaler owns replicas: left out of what is
            // applied, server-side apply neither resets nor claims them (docs/operator.md,
            // "Scaling"); a pod group is not autoscaled
            .withReplicas(autoscaled ? null : pod.replicas())
            .withRevisionHistoryLimit(3)
            .withNewSelector()
            .withMatchLabels(pod.selector(fleet.name()))
            .endSelector()
            // a new pod is ready before an old one goes, so the agent keeps serving during a
            // rollout
            .withNewStrategy()
            .withType("RollingUpdate")
            .withNewRollingUpdate()
            .withMaxSurge(new IntOrString(1))
            .withMaxUnavailable(new IntOrString(0))
            .endRollingUpdate()
            .endStrategy()
            .withNewTemplate()
            .withNewMetadata()
            .withLabels(pod.labels(fleet.name()))
            .addToAnnotations(PallasNames.CONFIG_HASH_ANNOTATION, pod.configHash())
            .endMetadata()
            .withNewSpec()
            .withAutomountServiceAccountToken(false)
            .withServiceAccountName(
                // an agent's own identity, or its pod group's, which the group's agents share
                fleet.primary().getSpec().auth() == null
                    ? null
                    : PallasNames.serviceAccountOf(fleet.primary(), pod.agents().get(0).agent()))
            .withEnableServiceLinks(false)
            .withTerminationGracePeriodSeconds(
                (long) config.drainSeconds() + Pods.PRE_STOP_SECONDS + 10)
            .withSecurityContext(Pods.podSecurity())
            .withTopologySpreadConstraints(Pods.spread(pod.selector(fleet.name())))
            .withImagePullSecrets(Pods.pullSecrets(config))
            .addNewContainer()
            .withName("agent")
            .withImage(config.runtimeImage())
            .withImagePullPolicy(config.imagePullPolicy())
            .withArgs(args(pod, config))
            .withPorts(Pods.agentPorts(pod))
            .withEnv(env(fleet, pod, config))
            .withResources(Pods.resources(pod.resources()))
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
            .withVolumeMounts(Pods.agentMounts(fleet))
            .endContainer()
            .withVolumes(Pods.agentVolumes(fleet, pod))
            .endSpec()
            .endTemplate()
            .endSpec()
            .build();
    // a change of these changes the pod template, which rolls the agent's pods
    deployment
        .getSpec()
        .setTemplate(Pods.withSettings(deployment.getSpec().getTemplate(), pod.settings(), false));
    return deployment;
  }
}
