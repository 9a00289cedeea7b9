package ca.helu.pallas.operator.dependent;

/**
 * Label selectors of the operator's informers: only objects it manages, one component per informer
 * so that two dependents of one kind never see each other's objects.
 */
final class Selectors {
  static final String MANAGED = "app.kubernetes.io/managed-by=pallas-operator";
  static final String AGENTS = MANAGED + ",app.kubernetes.io/component=agent";
  static final String REGISTRY = MANAGED + ",app.kubernetes.io/component=registry";

  private Selectors() {}
}
