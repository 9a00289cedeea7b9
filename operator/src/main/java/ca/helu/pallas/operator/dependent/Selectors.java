package ca.helu.pallas.operator.dependent;

import ca.helu.pallas.api.PallasNames;
import io.fabric8.kubernetes.api.model.HasMetadata;
import java.util.Map;

/**
 * Label selectors of the operator's informers: only objects it manages, one component per informer
 * so that two dependents of one kind never see each other's objects.
 */
final class Selectors {
  static final String MANAGED = "app.kubernetes.io/managed-by=pallas-operator";
  static final String AGENTS = MANAGED + ",app.kubernetes.io/component=agent";
  static final String REGISTRY = MANAGED + ",app.kubernetes.io/component=registry";

  private Selectors() {}

  /** An object of an agent (not of the registry). */
  static boolean isAgent(HasMetadata object) {
    Map<String, String> labels = object.getMetadata().getLabels();
    return labels != null
        && PallasNames.COMPONENT_AGENT.equals(labels.get(PallasNames.LABEL_COMPONENT));
  }
}
