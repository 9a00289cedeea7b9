package ca.helu.pallas.operator.dependent;

import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.operator.render.RenderedFleet;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import java.util.Map;

/**
 * The metadata every object carries: its name in the PallasDeployment's namespace, its labels, and
 * the PallasDeployment as controller owner, so deleting it deletes the fleet and tools know who
 * manages the object.
 */
final class Owners {
  private Owners() {}

  static ObjectMeta metadata(RenderedFleet fleet, String name, Map<String, String> labels) {
    return new ObjectMetaBuilder()
        .withName(name)
        .withNamespace(fleet.namespace())
        .withLabels(labels)
        .withOwnerReferences(controller(fleet))
        .build();
  }

  private static OwnerReference controller(RenderedFleet fleet) {
    PallasDeployment owner = fleet.primary();
    return new OwnerReferenceBuilder()
        .withApiVersion(PallasDeployment.API_VERSION)
        .withKind(PallasDeployment.KIND)
        .withName(owner.getMetadata().getName())
        .withUid(owner.getMetadata().getUid())
        .withController(true)
        .withBlockOwnerDeletion(true)
        .build();
  }
}
