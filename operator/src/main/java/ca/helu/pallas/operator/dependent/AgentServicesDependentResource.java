package ca.helu.pallas.operator.dependent;

import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.api.PallasNames;
import ca.helu.pallas.api.SessionAffinity;
import ca.helu.pallas.operator.render.FleetPod;
import ca.helu.pallas.operator.render.RenderedAgent;
import ca.helu.pallas.operator.render.RenderedFleet;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
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
import java.util.function.Predicate;

/**
 * Per agent a Service {@code X-a} on the agent's port; agents and Daedalus call it by DNS name. It
 * selects the pods that serve the agent: its own, or its pod group's (docs/operator.md, "Agents
 * sharing a pod").
 */
@KubernetesDependent(informer = @Informer(labelSelector = Selectors.AGENTS))
public class AgentServicesDependentResource
    extends KubernetesDependentResource<Service, PallasDeployment>
    implements CRUDKubernetesBulkDependentResource<Service, PallasDeployment>,
        KubernetesBulkDependentResource<Service, PallasDeployment>,
        GarbageCollected<PallasDeployment> {

  public AgentServicesDependentResource() {
    super(Service.class);
  }

  /** Only agents' objects: the registry's of the same kind are another dependent's. */
  @Override
  public Predicate<Service> secondaryResourceFilter(
      PallasDeployment primary, Context<PallasDeployment> context) {
    return Selectors::isAgent;
  }

  @Override
  public Map<ResourceID, Service> desiredResources(
      PallasDeployment primary, Context<PallasDeployment> context) {
    return desired(Fleets.fleet(context));
  }

  static Map<ResourceID, Service> desired(RenderedFleet fleet) {
    Map<ResourceID, Service> services = new LinkedHashMap<>();
    for (RenderedAgent agent : fleet.agents().values()) {
      Service service = desired(fleet, agent);
      services.put(ResourceID.fromResource(service), service);
    }
    return services;
  }

  static Service desired(RenderedFleet fleet, RenderedAgent rendered) {
    String agent = rendered.name();
    FleetPod pod = fleet.podOf(agent);
    // affinity set only when asked for: left out, the Service has Kubernetes' default (None), and
    // taking it back out of an applied ClientIP restores that default
    String affinity =
        rendered.agent().effectiveSessionAffinity() == SessionAffinity.CLIENT_IP
            ? SessionAffinity.CLIENT_IP.wireName()
            : null;
    return new ServiceBuilder()
        .withMetadata(
            Owners.metadata(
                fleet,
                PallasNames.agentObject(fleet.name(), agent),
                PallasNames.agentLabels(fleet.name(), agent)))
        .withNewSpec()
        .withType("ClusterIP")
        .withSessionAffinity(affinity)
        .withSelector(pod.selector(fleet.name()))
        .addNewPort()
        .withName(PallasNames.PORT_NAME)
        .withPort(rendered.port())
        .withTargetPort(
            new IntOrString(
                pod.grouped() ? Pods.groupPortName(rendered.port()) : PallasNames.PORT_NAME))
        .withProtocol("TCP")
        .endPort()
        .endSpec()
        .build();
  }
}
