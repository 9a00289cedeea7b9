package ca.helu.pallas.operator.dependent;

import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.api.PallasNames;
import ca.helu.pallas.operator.render.RenderedFleet;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.CRUDKubernetesDependentResource;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;

/** ConfigMap {@code X-config}: the rendered manifest every pod reads; never a secret value. */
@KubernetesDependent(informer = @Informer(labelSelector = Selectors.MANAGED))
public class ConfigMapDependentResource
    extends CRUDKubernetesDependentResource<ConfigMap, PallasDeployment> {

  public ConfigMapDependentResource() {
    super(ConfigMap.class);
  }

  @Override
  protected ConfigMap desired(PallasDeployment primary, Context<PallasDeployment> context) {
    return desired(Fleets.fleet(context));
  }

  static ConfigMap desired(RenderedFleet fleet) {
    return new ConfigMapBuilder()
        .withMetadata(
            Owners.metadata(
                fleet,
                PallasNames.configMap(fleet.name()),
                PallasNames.instanceLabels(fleet.name())))
        .addToData(PallasNames.CONFIG_KEY, fleet.manifestYaml())
        .build();
  }
}
