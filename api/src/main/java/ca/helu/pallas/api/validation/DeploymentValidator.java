package ca.helu.pallas.api.validation;

import ca.helu.pallas.api.AgentGraph;
import ca.helu.pallas.api.PallasDeployment;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Checks a parsed PallasDeployment as the API server checks it, and a little more: every field's
 * schema constraints ({@link FieldConstraints}) and every {@link Rules rule}, each problem naming
 * its field and the offending value, then what no CRD can check (a dependency cycle). {@code serve
 * -f} and the operator both call it, so a manifest that serves locally also applies to a cluster.
 */
public final class DeploymentValidator {
  private static final Map<Class<?>, List<Rule>> ON_TYPE =
      Rules.ALL.stream().filter(r -> r.property() == null).collect(Collectors.groupingBy(Rule::on));
  private static final Map<Class<?>, Map<String, List<Rule>>> ON_FIELD =
      Rules.ALL.stream()
          .filter(r -> r.property() != null)
          .collect(Collectors.groupingBy(Rule::on, Collectors.groupingBy(Rule::property)));

  private DeploymentValidator() {}

  /** Every problem of a deployment, each naming its field; empty when it is valid. */
  public static List<String> validate(PallasDeployment d) {
    Problems p = new Problems();
    if (d.name() == null) {
      p.add("metadata.name", "required");
    }
    rulesOn(d, "", p);
    if (d.getSpec() == null) {
      p.add("spec", "required");
      return p.list();
    }
    walk(d.getSpec(), "spec", p);
    if (p.isEmpty()) {
      AgentGraph.of(d.getSpec())
          .cycle()
          .ifPresent(cycle ->
              p.add(
                  "spec.agents",
                  "dependency cycle " + cycle + " (through dependsOn and servers naming agents)"));
    }
    return p.list();
  }

  private static void rulesOn(Object self, String at, Problems p) {
    ON_TYPE.getOrDefault(self.getClass(), List.of()).forEach(r -> r.check().check(self, at, p));
  }

  /**
   * A record of the api: each field's constraints, rules and contents, then the record's own rules
   * across its fields, so that problems come in the order of the manifest, entries before lists.
   */
  private static void walk(Object record, String at, Problems p) {
    Map<String, List<Rule>> fieldRules = ON_FIELD.getOrDefault(record.getClass(), Map.of());
    for (FieldConstraints.Constrained field : FieldConstraints.of(record.getClass())) {
      Object value = field.valueOf(record);
      String path = at + "." + field.name();
      if (value == null) {
        if (field.required()) {
          p.add(path, "required");
        }
        continue;
      }
      String problem = firstProblem(field.own(), value);
      if (problem != null) {
        p.add(path, problem);
      } else {
        fieldRules
            .getOrDefault(field.name(), List.of())
            .forEach(r -> r.check().check(value, path, p));
      }
      contents(value, field.entry(), path, p);
    }
    rulesOn(record, at, p);
  }

  private static void contents(
      Object value, List<FieldConstraints.Constraint> entry, String path, Problems p) {
    if (ours(value)) {
      walk(value, path, p);
    } else if (value instanceof List<?> list) {
      for (int i = 0; i < list.size(); i++) {
        Object item = list.get(i);
        String at = path + "[" + i + "]";
        if (item == null) {
          p.add(at, "must not be empty");
          continue;
        }
        String problem = firstProblem(entry, item);
        if (problem != null) {
          p.add(at, problem);
        } else if (ours(item)) {
          walk(item, at, p);
        }
      }
    } else if (value instanceof Map<?, ?> map) {
      map.forEach((k, v) -> {
        if (ours(v)) {
          walk(v, path + "." + k, p);
        }
      });
    }
  }

  private static String firstProblem(
      Collection<FieldConstraints.Constraint> constraints, Object v) {
    for (FieldConstraints.Constraint c : constraints) {
      String problem = c.problem(v);
      if (problem != null) {
        return problem;
      }
    }
    return null;
  }

  /** The api's own records; Kubernetes' types inside them are the API server's to check. */
  private static boolean ours(Object value) {
    return value != null
        && value.getClass().isRecord()
        && value.getClass().getPackageName().equals(PallasDeployment.class.getPackageName());
  }
}
