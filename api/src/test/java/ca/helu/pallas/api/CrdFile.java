package ca.helu.pallas.api;

import io.fabric8.crdv2.generator.CRDGenerator;
import io.fabric8.crdv2.generator.CRDPostProcessor;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceColumnDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaProps;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;

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
   * Orders the printer columns, drops rules the generator reads twice (field and accessor) and
   * declares the condition lists as maps keyed by type.
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
      dedupe(version.getSchema().getOpenAPIV3Schema());
      CONDITION_LISTS.forEach(path -> keyedByType(version.getSchema().getOpenAPIV3Schema(), path));
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

    private static void dedupe(JSONSchemaProps schema) {
      if (schema == null) {
        return;
      }
      if (schema.getXKubernetesValidations() != null) {
        schema.setXKubernetesValidations(
            schema.getXKubernetesValidations().stream().distinct().toList());
      }
      if (schema.getProperties() != null) {
        schema.getProperties().values().forEach(Tidy::dedupe);
      }
      if (schema.getItems() != null) {
        dedupe(schema.getItems().getSchema());
      }
      if (schema.getAdditionalProperties() != null) {
        dedupe(schema.getAdditionalProperties().getSchema());
      }
    }
  }
}
