package ca.helu.pallas.operator.dependent;

import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.api.PallasNames;
import ca.helu.pallas.operator.render.RenderedFleet;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.dependent.DependentResource;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.CRUDKubernetesDependentResource;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependent;
import io.javaoperatorsdk.operator.processing.dependent.workflow.Condition;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;
import java.util.TreeMap;

/**
 * Secret {@code X-inline}: the inline {@code value} secrets of the spec, which the ConfigMap refers
 * to by key instead of holding them. Deleted when the spec has none.
 */
@KubernetesDependent(informer = @Informer(labelSelector = Selectors.MANAGED))
public class InlineSecretDependentResource
    extends CRUDKubernetesDependentResource<Secret, PallasDeployment> {

  public InlineSecretDependentResource() {
    super(Secret.class);
  }

  @Override
  protected Secret desired(PallasDeployment primary, Context<PallasDeployment> context) {
    return desired(Fleets.fleet(context));
  }

  static Secret desired(RenderedFleet fleet) {
    Map<String, String> data = new TreeMap<>();
    fleet
        .inlineSecretData()
        .forEach((k, v) ->
            data.put(k, Base64.getEncoder().encodeToString(v.getBytes(StandardCharsets.UTF_8))));
    return new SecretBuilder()
        .withMetadata(
            Owners.metadata(
                fleet,
                PallasNames.inlineSecret(fleet.name()),
                PallasNames.instanceLabels(fleet.name())))
        .withType("Opaque")
        .withData(data)
        .build();
  }

  /** Reconciled while the spec holds an inline secret, deleted otherwise. */
  public static class HasInlineSecrets implements Condition<Secret, PallasDeployment> {
    @Override
    public boolean isMet(
        DependentResource<Secret, PallasDeployment> dependentResource,
        PallasDeployment primary,
        Context<PallasDeployment> context) {
      return !Fleets.fleet(context).inlineSecretData().isEmpty();
    }
  }
}
