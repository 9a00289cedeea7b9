package ca.helu.pallas.operator.dependent;

import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.api.PallasNames;
import ca.helu.pallas.operator.render.RenderedFleet;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.rbac.PolicyRuleBuilder;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.api.model.rbac.RoleBindingBuilder;
import io.fabric8.kubernetes.api.model.rbac.RoleBuilder;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.CRUDKubernetesDependentResource;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;

/**
 * The registry pod's identity: ServiceAccount, Role and RoleBinding {@code X-registry}, allowing
 * get, list and watch of ConfigMap {@code X-config} and nothing else.
 */
public final class RegistryAccess {
  private RegistryAccess() {}

  static ServiceAccount serviceAccount(RenderedFleet fleet) {
    return new ServiceAccountBuilder()
        .withMetadata(
            Owners.metadata(
                fleet,
                PallasNames.registryObject(fleet.name()),
                PallasNames.registryLabels(fleet.name())))
        .build();
  }

  static Role role(RenderedFleet fleet) {
    return new RoleBuilder()
        .withMetadata(
            Owners.metadata(
                fleet,
                PallasNames.registryObject(fleet.name()),
                PallasNames.registryLabels(fleet.name())))
        .withRules(
            new PolicyRuleBuilder()
                .withApiGroups("")
                .withResources("configmaps")
                .withResourceNames(PallasNames.configMap(fleet.name()))
                .withVerbs("get", "list", "watch")
                .build())
        .build();
  }

  static RoleBinding roleBinding(RenderedFleet fleet) {
    String name = PallasNames.registryObject(fleet.name());
    return new RoleBindingBuilder()
        .withMetadata(Owners.metadata(fleet, name, PallasNames.registryLabels(fleet.name())))
        .withNewRoleRef()
        .withApiGroup("rbac.authorization.k8s.io")
        .withKind("Role")
        .withName(name)
        .endRoleRef()
        .addNewSubject()
        .withKind("ServiceAccount")
        .withName(name)
        .withNamespace(fleet.namespace())
        .endSubject()
        .build();
  }

  /** ServiceAccount {@code X-registry}. */
  @KubernetesDependent(informer = @Informer(labelSelector = Selectors.REGISTRY))
  public static class ServiceAccountDependent
      extends CRUDKubernetesDependentResource<ServiceAccount, PallasDeployment> {
    public ServiceAccountDependent() {
      super(ServiceAccount.class);
    }

    @Override
    protected ServiceAccount desired(PallasDeployment primary, Context<PallasDeployment> context) {
      return serviceAccount(Fleets.fleet(context));
    }
  }

  /** Role {@code X-registry}. */
  @KubernetesDependent(informer = @Informer(labelSelector = Selectors.REGISTRY))
  public static class RoleDependent
      extends CRUDKubernetesDependentResource<Role, PallasDeployment> {
    public RoleDependent() {
      super(Role.class);
    }

    @Override
    protected Role desired(PallasDeployment primary, Context<PallasDeployment> context) {
      return role(Fleets.fleet(context));
    }
  }

  /** RoleBinding {@code X-registry}. */
  @KubernetesDependent(informer = @Informer(labelSelector = Selectors.REGISTRY))
  public static class RoleBindingDependent
      extends CRUDKubernetesDependentResource<RoleBinding, PallasDeployment> {
    public RoleBindingDependent() {
      super(RoleBinding.class);
    }

    @Override
    protected RoleBinding desired(PallasDeployment primary, Context<PallasDeployment> context) {
      return roleBinding(Fleets.fleet(context));
    }
  }
}
