package ca.helu.pallas.operator.it;

import static org.assertj.core.api.Assertions.assertThat;

import ca.helu.pallas.api.ManifestParser;
import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.api.Violations;
import ca.helu.pallas.api.validation.DeploymentValidator;
import ca.helu.pallas.operator.testing.KubeCluster;
import com.fasterxml.jackson.core.JsonProcessingException;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every rule of the schema, each broken by one manifest: the API server refuses it naming the
 * field, and so does the validator of {@code serve -f} and the operator. The manifests come from
 * the rules' declarations ({@link ca.helu.pallas.api.validation.Rules}, one per CEL rule) and from
 * the fields' constraint annotations (one per {@code @Required}, {@code @Size}, {@code @Pattern},
 * {@code @Min}, {@code @Max}), so a rule added in its one place is tested here without an edit.
 */
class CelRulesIT {
  private static final KubernetesClient K8S = KubeCluster.shared().client();
  private static String namespace;

  @BeforeAll
  static void namespace() {
    namespace = KubeCluster.shared().namespace("cel");
  }

  static Stream<Violations> rules() {
    return Violations.ofRules().stream();
  }

  static Stream<Violations> fields() {
    return Violations.ofFields().stream();
  }

  /** With the rule's own message, or the validator's words where the CRD's are the value's. */
  @ParameterizedTest(name = "{0}")
  @MethodSource("rules")
  void theApiServerRefusesEachRuleAndSoDoesTheValidator(Violations v)
      throws JsonProcessingException {
    PallasDeployment d = parse(v);
    List<String> problems = DeploymentValidator.validate(d);
    assertThat(problems).as("serve -f refuses it").isNotEmpty();
    String words =
        v.text() != null ? v.text() : problems.get(0).substring(problems.get(0).indexOf(": ") + 2);
    assertThat(refusal(d)).contains(v.field(), words);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("fields")
  void theApiServerRefusesEachFieldConstraintAndSoDoesTheValidator(Violations v)
      throws JsonProcessingException {
    PallasDeployment d = parse(v);
    assertThat(refusal(d)).contains(v.field() + ":");
    assertThat(DeploymentValidator.validate(d))
        .as("serve -f refuses it")
        .anySatisfy(problem -> assertThat(problem).startsWith(v.field() + ": "));
  }

  private static PallasDeployment parse(Violations v) throws JsonProcessingException {
    PallasDeployment d = ManifestParser.yamlMapper().readValue(v.yaml(), PallasDeployment.class);
    d.getMetadata().setNamespace(namespace);
    return d;
  }

  /** The API server's refusal of the manifest: 422 (Unprocessable Entity), with its words. */
  private static String refusal(PallasDeployment d) {
    try {
      K8S.resource(d).create();
    } catch (KubernetesClientException e) {
      assertThat(e.getCode()).as(e.getMessage()).isEqualTo(422);
      return e.getMessage();
    }
    throw new AssertionError("the API server stored it");
  }
}
