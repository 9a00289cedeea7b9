package ca.helu.pallas.operator.dependent;

import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.operator.render.RenderedFleet;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;

/**
 * The owner reference every object carries: the PallasDeployment, as its controller, so deleting it
 * deletes the fleet and tools know who manages the object.
 */
final class Owners {
  private Owners() {}

  static OwnerReference controller(RenderedFleet fleet) {
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
