package ca.helu.pallas.api;

import static org.assertj.core.api.Assertions.assertThat;

import ca.helu.pallas.api.validation.DeploymentValidator;
import ca.helu.pallas.api.validation.Formats;
import com.fasterxml.jackson.core.JsonProcessingException;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The validator's side of every rule and field constraint of the schema ({@link Violations});
 * CelRulesIT holds the API server to the same manifests.
 */
class RulesTest {
  static Stream<Violations> violations() {
    return Stream.concat(Violations.ofRules().stream(), Violations.ofFields().stream());
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("violations")
  void theValidatorRefusesEachNamingTheField(Violations v) throws JsonProcessingException {
    PallasDeployment d = ManifestParser.yamlMapper().readValue(v.yaml(), PallasDeployment.class);
    assertThat(DeploymentValidator.validate(d))
        .anySatisfy(problem -> assertThat(problem).startsWith(v.field()));
  }

  @Test
  void everyRuleExampleBreaksOnlyItsRule() throws JsonProcessingException {
    for (Violations v : Violations.ofRules()) {
      PallasDeployment d = ManifestParser.yamlMapper().readValue(v.yaml(), PallasDeployment.class);
      assertThat(DeploymentValidator.validate(d))
          .as(v.title())
          .isNotEmpty()
          .allSatisfy(problem -> assertThat(problem).startsWith(v.field()));
    }
  }

  @Test
  void everyPatternOfTheSchemaHasWordsForARefusal() {
    assertThat(Violations.patterns())
        .hasSizeGreaterThan(5)
        .allSatisfy(p -> assertThat(Formats.described(p)).as(p).isTrue());
  }

  /** The schema's pattern spells the providers and built-ins the code switches over. */
  @Test
  void theModelPatternIsTheProvidersAndTheBuiltIns() {
    java.util.regex.Pattern pattern = java.util.regex.Pattern.compile(Models.PATTERN);
    for (Provider p : Provider.values()) {
      assertThat(pattern.matcher(p.id() + ".some-model:7b").matches()).as(p.id()).isTrue();
      assertThat(Provider.ofModel(p.id() + ".x")).contains(p);
    }
    Models.BUILT_IN.forEach(m -> assertThat(pattern.matcher(m).matches()).as(m).isTrue());
    assertThat(pattern.matcher("mistral.large").matches()).isFalse();
    assertThat(Models.PATTERN.split("\\|"))
        .hasSize(Provider.values().length + Models.BUILT_IN.size());
    assertThat(Models.choices())
        .isEqualTo("openai.<model>, anthropic.<model>, passthrough, playback or slow");
  }
}
