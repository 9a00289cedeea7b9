package ca.helu.pallas.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class CrdReferenceTest {
  private static final Path DOC = Path.of("..", "docs", "crd-reference.md");

  /** {@code ./mvnw -pl api test -Dtest=CrdReferenceTest -Dpallas.updateDocs} rewrites the table. */
  @Test
  void theDocumentedFieldsAreTheCrdsFields() throws IOException {
    String doc = Files.readString(DOC);
    int begin = doc.indexOf(CrdReference.BEGIN);
    int end = doc.indexOf(CrdReference.END);
    assertThat(begin).as("markers in %s", DOC).isNotNegative();
    String committed = doc.substring(begin, end + CrdReference.END.length());
    String generated = CrdReference.generate();
    if (System.getProperty("pallas.updateDocs") != null) {
      Files.writeString(DOC, doc.replace(committed, generated));
      committed = generated;
    }
    assertThat(committed)
        .as(
            "docs/crd-reference.md is stale: ./mvnw -pl api test -Dtest=CrdReferenceTest"
                + " -Dpallas.updateDocs")
        .isEqualTo(generated);
    assertThat(generated)
        .contains(
            "`spec.agents[].name`", "`spec.mcpServers[].headers[].valueFrom.secretKeyRef.key`")
        .contains("`status.agents[].waitingFor`", "agents[].port must be unique");
  }
}
