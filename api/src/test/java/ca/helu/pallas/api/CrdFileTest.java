package ca.helu.pallas.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import org.junit.jupiter.api.Test;

class CrdFileTest {
  /** {@code ./mvnw -pl api test -Dtest=CrdFileTest -Dpallas.updateCrds} rewrites crds/. */
  @Test
  void committedCrdIsWhatTheTypesGenerate() throws IOException {
    String generated = CrdFile.generate();
    if (System.getProperty("pallas.updateCrds") != null) {
      Files.writeString(CrdFile.COMMITTED, generated);
    }
    assertThat(Files.readString(CrdFile.COMMITTED))
        .as(
            "crds/ is stale: regenerate it with ./mvnw -pl api test -Dtest=CrdFileTest"
                + " -Dpallas.updateCrds")
        .isEqualTo(generated);
  }
}
