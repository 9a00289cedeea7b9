package ca.helu.pallas.operator.dependent;

import ca.helu.pallas.api.AutoscalingSpec;
import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.api.PallasNames;
import ca.helu.pallas.operator.render.RenderedAgent;
import ca.helu.pallas.operator.render.RenderedFleet;
import ca.helu.pallas.operator.render.StartGate;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscaler;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscalerBuilder;
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
 * Per agent with {@code autoscaling} a HorizontalPodAutoscaler {@code X-a} (autoscaling/v2) on the
 * Pods metric {@value #METRIC}: the average of {@code send_message} calls in flight per pod, which
 * a custom-metrics adapter serves from the pods' /metrics (docs/operations.md, "Scaling"). The
 * agent's Deployment then carries no replicas, so the operator never takes them back from it.
 */
@KubernetesDependent(informer = @Informer(labelSelector = Selectors.AGENTS))
public class AgentAutoscalersDependentResource
    extends KubernetesDependentResource<HorizontalPodAutoscaler, PallasDeployment>
    implements CRUDKubernetesBulkDependentResource<HorizontalPodAutoscaler, PallasDeployment>,
        KubernetesBulkDependentResource<HorizontalPodAutoscaler, PallasDeployment>,
        GarbageCollected<PallasDeployment> {

  /** The runtime's gauge, as Prometheus names it (docs/metrics.md). */
  public static final String METRIC = "pallas_send_message_in_flight";

  public AgentAutoscalersDependentResource() {
    super(HorizontalPodAutoscaler.class);
  }

  @Override
  public Map<ResourceID, HorizontalPodAutoscaler> desiredResources(
      PallasDeployment primary, Context<PallasDeployment> context) {
    return desired(Fleets.fleet(context), Fleets.gate(context));
  }

  /** One per autoscaled agent whose Deployment exists (it waits for the same start gate). */
  static Map<ResourceID, HorizontalPodAutoscaler> desired(RenderedFleet fleet, StartGate gate) {
    Map<ResourceID, HorizontalPodAutoscaler> autoscalers = new LinkedHashMap<>();
    // an agent in a pod group is never autoscaled (validation refuses it): its pod is its own
    for (RenderedAgent pod : fleet.agents().values()) {
      AutoscalingSpec scaling = pod.agent().autoscaling();
      if (scaling != null && gate.startable().contains(pod.agent().name())) {
        HorizontalPodAutoscaler hpa = desired(fleet, pod, scaling);
        autoscalers.put(ResourceID.fromResource(hpa), hpa);
      }
    }
    return autoscalers;
  }

  static HorizontalPodAutoscaler desired(
      RenderedFleet fleet, RenderedAgent pod, AutoscalingSpec scaling) {
    String agent = pod.agent().name();
    String name = PallasNames.agentObject(fleet.name(), agent);
    return new HorizontalPodAutoscalerBuilder()
        .withMetadata(Owners.metadata(fleet, name, PallasNames.agentLabels(fleet.name(), agent)))
        .withNewSpec()
        .withNewScaleTargetRef()
        .withApiVersion("apps/v1")
        .withKind("Deployment")
        .withName(name)
        .endScaleTargetRef()
        .withMinReplicas(scaling.effectiveMinReplicas())
        .withMaxReplicas(scaling.maxReplicas())
        .addNewMetric()
        .withType("Pods")
        .withNewPods()
        .withNewMetric()
        .withName(METRIC)
        .endMetric()
        .withNewTarget()
        .withType("AverageValue")
        .withAverageValue(new Quantity(Integer.toString(scaling.effectiveTargetInFlightCalls())))
        .endTarget()
        .endPods()
        .endMetric()
        .endSpec()
        .build();
  }
}
