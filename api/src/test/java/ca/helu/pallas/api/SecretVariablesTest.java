package ca.helu.pallas.api;

import static org.assertj.core.api.Assertions.assertThat;

import ca.helu.pallas.api.SecretValue.SecretKeyRef;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

class SecretVariablesTest {
  private static final Pattern ENV_NAME = Pattern.compile("^[A-Za-z_][A-Za-z0-9_]*$");

  @Test
  void pairsThatUsedToCollideGetDifferentVariables() {
    assertThat(SecretVariables.nameFor(new SecretKeyRef("a-b", "c")))
        .isEqualTo("PALLAS_SECRET_a_hb__c");
    assertThat(SecretVariables.nameFor(new SecretKeyRef("a", "b-c")))
        .isEqualTo("PALLAS_SECRET_a__b_hc");
    assertThat(SecretVariables.nameFor(new SecretKeyRef("llm", "OPENAI_API_KEY")))
        .isEqualTo("PALLAS_SECRET_llm__OPENAI_uAPI_uKEY");
  }

  @Test
  void everyPairOfAnAdversarialAlphabetMapsToItsOwnValidVariable() {
    // every name and key of up to three characters over the separators and a letter
    List<String> parts = words("ab_-.".toCharArray(), 3);
    Map<String, SecretKeyRef> seen = new HashMap<>();
    for (String name : parts) {
      for (String key : parts) {
        SecretKeyRef ref = new SecretKeyRef(name, key);
        String variable = SecretVariables.nameFor(ref);
        assertThat(variable).matches(ENV_NAME);
        SecretKeyRef before = seen.put(variable, ref);
        assertThat(before).as("%s and %s share %s", before, ref, variable).isNull();
      }
    }
    assertThat(seen).hasSize(parts.size() * parts.size());
  }

  private static List<String> words(char[] alphabet, int maxLength) {
    List<String> out = new java.util.ArrayList<>();
    List<String> current = List.of("");
    for (int length = 1; length <= maxLength; length++) {
      List<String> next = new java.util.ArrayList<>();
      for (String prefix : current) {
        for (char c : alphabet) {
          next.add(prefix + c);
        }
      }
      out.addAll(next);
      current = next;
    }
    return out;
  }
}
