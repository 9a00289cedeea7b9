package ca.helu.pallas.operator.dependent;

import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.api.PallasNames;
import ca.helu.pallas.operator.render.FleetPod;
import ca.helu.pallas.operator.render.RenderedFleet;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
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
 * Per agent pod of a fleet with {@code spec.auth} a ServiceAccount, {@code X-a} for an agent in a
 * pod of its own and {@code X-g} for pod group g, unless its pod settings name one of the user's:
 * the identity its pods present to the agents they call, as projected tokens (docs/runtime.md,
 * "Agents calling agents"). It holds no permission and mounts no token of its own; reading the API
 * server's service-account keys, which the called agent does, every ServiceAccount may (the default
 * ClusterRoleBinding system:service-account-issuer-discovery).
 */
@KubernetesDependent(informer = @Informer(labelSelector = Selectors.AGENTS))
public class AgentServiceAccountsDependentResource
    extends KubernetesDependentResource<ServiceAccount, PallasDeployment>
    implements CRUDKubernetesBulkDependentResource<ServiceAccount, PallasDeployment>,
        KubernetesBulkDependentResource<ServiceAccount, PallasDeployment>,
        GarbageCollected<PallasDeployment> {

  public AgentServiceAccountsDependentResource() {
    super(ServiceAccount.class);
  }

  @Override
  public Predicate<ServiceAccount> secondaryResourceFilter(
      PallasDeployment primary, Context<PallasDeployment> context) {
    return Selectors::isAgent;
  }

  @Override
  public Map<ResourceID, ServiceAccount> desiredResources(
      PallasDeployment primary, Context<PallasDeployment> context) {
    return desired(Fleets.fleet(context));
  }

  static Map<ResourceID, ServiceAccount> desired(RenderedFleet fleet) {
    Map<ResourceID, ServiceAccount> accounts = new LinkedHashMap<>();
    PallasDeployment primary = fleet.primary();
    if (primary.getSpec().auth() == null) {
      return accounts;
    }
    // one per pod: an agent's own, or a pod group's, which its agents share
    for (FleetPod pod : fleet.pods().values()) {
      if (pod.settings().serviceAccountName() != null) {
        continue; // the user's own
      }
      ServiceAccount account =
          new ServiceAccountBuilder()
              .withMetadata(
                  Owners.metadata(
                      fleet,
                      PallasNames.serviceAccountOf(primary, pod.agents().get(0).agent()),
                      pod.labels(fleet.name())))
              .withAutomountServiceAccountToken(false)
              .build();
      accounts.put(ResourceID.fromResource(account), account);
    }
    return accounts;
  }
}
