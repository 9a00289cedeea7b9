package ca.helu.pallas.api;

import ca.helu.pallas.api.validation.Rule;
import ca.helu.pallas.api.validation.Rules;
import io.fabric8.crdv2.generator.CRDGenerator;
import io.fabric8.crdv2.generator.CRDPostProcessor;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceColumnDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaProps;
import io.fabric8.kubernetes.api.model.apiextensions.v1.ValidationRule;
import io.fabric8.kubernetes.api.model.apiextensions.v1.ValidationRuleBuilder;
import java.io.ByteArrayOutputStream;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * Generates the PallasDeployment CRD from the api types with fabric8's crd-generator; {@link
 * CrdFileTest} fails when {@code crds/} differs, or rewrites it when asked.
 */
public final class CrdFile {
  public static final Path COMMITTED =
      Path.of("..", "crds", "pallasdeployments." + PallasDeployment.GROUP + "-v1.yml");

  /** kubectl shows the columns in this order; the generator sorts them by JSON path. */
  private static final List<String> COLUMN_ORDER =
      List.of("Ready", "Agents", "Registry URL", "Verified", "Age");

  private CrdFile() {}

  public static String generate() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    new CRDGenerator()
        .customResourceClasses(PallasDeployment.class)
        .forCRDVersions("v1")
        .withParallelGenerationEnabled(false)
        .withPostProcessor(new Tidy())
        .withOutput(
            new CRDGenerator.CRDOutput<ByteArrayOutputStream>() {
              @Override
              public ByteArrayOutputStream outputFor(String crdName) {
                return out;
              }

              @Override
              public void close() {}
            })
        .generate();
    return out.toString(StandardCharsets.UTF_8);
  }

  /**
   * Lists of conditions keyed by their type, as Kubernetes' API conventions ask: a server-side
   * apply then merges them entry by entry, and the API server refuses two of one type. fabric8's
   * generator has no annotation for {@code x-kubernetes-list-type}, so it is set here.
   */
  private static final List<List<String>> CONDITION_LISTS =
      List.of(List.of("status", "conditions"), List.of("status", "agents", "[]", "conditions"));

  /**
   * Orders the printer columns, adds the CEL rules of {@link Rules} and declares the condition
   * lists as maps keyed by type.
   */
  private static final class Tidy implements CRDPostProcessor {
    @Override
    public HasMetadata process(HasMetadata crd, String crdSpecVersion) {
      var version = ((CustomResourceDefinition) crd).getSpec().getVersions().get(0);
      List<CustomResourceColumnDefinition> columns =
          version.getAdditionalPrinterColumns().stream()
              .sorted(Comparator.comparingInt(c -> COLUMN_ORDER.indexOf(c.getName())))
              .toList();
      version.setAdditionalPrinterColumns(columns);
      JSONSchemaProps root = version.getSchema().getOpenAPIV3Schema();
      Set<Rule> added = new HashSet<>();
      addRules(PallasDeployment.class, root, added);
      addRules(PallasDeploymentSpec.class, root.getProperties().get("spec"), added);
      List<Rule> nowhere = Rules.ALL.stream().filter(r -> !added.contains(r)).toList();
      if (!nowhere.isEmpty()) {
        throw new IllegalStateException("rules on types the CRD does not hold: " + nowhere);
      }
      CONDITION_LISTS.forEach(path -> keyedByType(root, path));
      return crd;
    }

    private static void keyedByType(JSONSchemaProps root, List<String> path) {
      JSONSchemaProps list = root;
      for (String step : path) {
        list =
            step.equals("[]")
                ? list.getItems().getSchema()
                : java.util.Objects.requireNonNull(
                    list.getProperties().get(step), () -> "no " + step + " in " + path);
      }
      list.setXKubernetesListType("map");
      list.setXKubernetesListMapKeys(List.of("type"));
      // a map key must be required (the API server refuses the CRD otherwise)
      list.getItems().getSchema().setRequired(List.of("status", "type"));
    }

    /**
     * The rules on {@code type} and its fields, added to its schema, and so on down its fields'
     * types: a type used in two places (spec.pod, agents[].pod) carries its rules in both.
     */
    private static void addRules(Class<?> type, JSONSchemaProps schema, Set<Rule> added) {
      if (schema.getXKubernetesValidations() != null
          && !schema.getXKubernetesValidations().isEmpty()) {
        throw new IllegalStateException(
            type.getName()
                + " declares a CEL rule by annotation: declare it in"
                + " ca.helu.pallas.api.validation.Rules, the one source the validator reads too");
      }
      add(type, null, schema, added);
      if (!type.isRecord()) {
        return;
      }
      for (RecordComponent c : type.getRecordComponents()) {
        JSONSchemaProps field = schema.getProperties().get(c.getName());
        if (field == null) {
          continue;
        }
        add(type, c.getName(), field, added);
        Type generic = c.getGenericType();
        if (generic instanceof ParameterizedType p && List.class.equals(p.getRawType())) {
          if (p.getActualTypeArguments()[0] instanceof Class<?> item && ours(item)) {
            addRules(item, field.getItems().getSchema(), added);
          }
        } else if (generic instanceof Class<?> value && ours(value)) {
          addRules(value, field, added);
        }
      }
    }

    private static void add(
        Class<?> type, String property, JSONSchemaProps schema, Set<Rule> added) {
      List<ValidationRule> rules =
          Rules.ALL.stream()
              .filter(r -> r.on().equals(type) && Objects.equals(r.property(), property))
              .peek(added::add)
              .map(r ->
                  new ValidationRuleBuilder()
                      .withRule(r.cel())
                      .withMessage(r.message())
                      .withMessageExpression(r.messageExpression())
                      .withFieldPath(r.fieldPath())
                      .build())
              .toList();
      if (!rules.isEmpty()) {
        schema.setXKubernetesValidations(rules);
      }
    }

    private static boolean ours(Class<?> type) {
      return type.isRecord()
          && type.getPackageName().equals(PallasDeployment.class.getPackageName());
    }
  }
}
