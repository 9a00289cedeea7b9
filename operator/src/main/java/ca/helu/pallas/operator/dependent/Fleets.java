package ca.helu.pallas.operator.dependent;

import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.operator.OperatorConfig;
import ca.helu.pallas.operator.render.RenderedFleet;
import ca.helu.pallas.operator.render.StartGate;
import io.javaoperatorsdk.operator.api.reconciler.Context;

/**
 * What the reconciler computed for this reconcile and hands to every dependent through the
 * workflow's context: {@code desired()} reads it and nothing else besides the primary.
 */
public final class Fleets {
  private Fleets() {}

  /** Puts the inputs of this reconcile where the dependents find them. */
  public static void share(
      Context<PallasDeployment> context,
      OperatorConfig config,
      RenderedFleet fleet,
      StartGate gate) {
    var shared = context.managedWorkflowAndDependentResourceContext();
    shared.put(OperatorConfig.class, config);
    shared.put(RenderedFleet.class, fleet);
    shared.put(StartGate.class, gate);
  }

  static RenderedFleet fleet(Context<PallasDeployment> context) {
    return context
        .managedWorkflowAndDependentResourceContext()
        .getMandatory(RenderedFleet.class, RenderedFleet.class);
  }

  static OperatorConfig config(Context<PallasDeployment> context) {
    return context
        .managedWorkflowAndDependentResourceContext()
        .getMandatory(OperatorConfig.class, OperatorConfig.class);
  }

  static StartGate gate(Context<PallasDeployment> context) {
    return context
        .managedWorkflowAndDependentResourceContext()
        .getMandatory(StartGate.class, StartGate.class);
  }
}
