package ca.helu.pallas.operator.dependent;

import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.api.PallasNames;
import ca.helu.pallas.operator.render.RenderedFleet;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.CRUDKubernetesDependentResource;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;

/** Service {@code X-registry}: where Daedalus fetches /.well-known/mcp/server.json. */
@KubernetesDependent(informer = @Informer(labelSelector = Selectors.REGISTRY))
public class RegistryServiceDependentResource
    extends CRUDKubernetesDependentResource<Service, PallasDeployment> {

  public RegistryServiceDependentResource() {
    super(Service.class);
  }

  @Override
  protected Service desired(PallasDeployment primary, Context<PallasDeployment> context) {
    return desired(Fleets.fleet(context));
  }

  static Service desired(RenderedFleet fleet) {
    return new ServiceBuilder()
        .withMetadata(
            Owners.metadata(
                fleet,
                PallasNames.registryObject(fleet.name()),
                PallasNames.registryLabels(fleet.name())))
        .withNewSpec()
        .withType("ClusterIP")
        .withSelector(PallasNames.registrySelector(fleet.name()))
        .addNewPort()
        .withName(PallasNames.PORT_NAME)
        .withPort(fleet.primary().getSpec().effectiveRegistry().effectivePort())
        .withTargetPort(new IntOrString(PallasNames.PORT_NAME))
        .withProtocol("TCP")
        .endPort()
        .endSpec()
        .build();
  }
}
