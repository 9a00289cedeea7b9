package ca.helu.pallas.operator.dependent;

import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.api.PallasNames;
import ca.helu.pallas.operator.render.FleetPod;
import ca.helu.pallas.operator.render.RenderedFleet;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetBuilder;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.dependent.GarbageCollected;
import io.javaoperatorsdk.operator.processing.dependent.CRUDKubernetesBulkDependentResource;
import io.javaoperatorsdk.operator.processing.dependent.KubernetesBulkDependentResource;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependentResource;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Per agent that runs more than one pod ({@code replicas} or {@code autoscaling.minReplicas} above
 * 1), or pod group of more than one pod, a PodDisruptionBudget {@code X-a} (or {@code X-g})
 * allowing one of its pods down at a time: a node drain then evicts them one by one and the agents
 * keep serving. One pod gets none (a budget of one pod would block every drain, docs/operator.md,
 * "Disruptions"); it goes when the count drops to one.
 */
@KubernetesDependent(informer = @Informer(labelSelector = Selectors.AGENTS))
public class AgentDisruptionBudgetsDependentResource
    extends KubernetesDependentResource<PodDisruptionBudget, PallasDeployment>
    implements CRUDKubernetesBulkDependentResource<PodDisruptionBudget, PallasDeployment>,
        KubernetesBulkDependentResource<PodDisruptionBudget, PallasDeployment>,
        GarbageCollected<PallasDeployment> {

  public AgentDisruptionBudgetsDependentResource() {
    super(PodDisruptionBudget.class);
  }

  @Override
  public Map<ResourceID, PodDisruptionBudget> desiredResources(
      PallasDeployment primary, Context<PallasDeployment> context) {
    return desired(Fleets.fleet(context));
  }

  static Map<ResourceID, PodDisruptionBudget> desired(RenderedFleet fleet) {
    Map<ResourceID, PodDisruptionBudget> budgets = new LinkedHashMap<>();
    for (FleetPod pod : fleet.pods().values()) {
      if (pod.replicated()) {
        PodDisruptionBudget budget = desired(fleet, pod);
        budgets.put(ResourceID.fromResource(budget), budget);
      }
    }
    return budgets;
  }

  static PodDisruptionBudget desired(RenderedFleet fleet, FleetPod pod) {
    return new PodDisruptionBudgetBuilder()
        .withMetadata(
            Owners.metadata(
                fleet, PallasNames.agentObject(fleet.name(), pod.name()), pod.labels(fleet.name())))
        .withNewSpec()
        .withMaxUnavailable(new IntOrString(1))
        .withNewSelector()
        .withMatchLabels(pod.selector(fleet.name()))
        .endSelector()
        .endSpec()
        .build();
  }
}
