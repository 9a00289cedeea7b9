package ca.helu.pallas.runtime.config;

import static org.assertj.core.api.Assertions.assertThat;

import ca.helu.pallas.api.SecretValue;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class EnvironmentTest {
  @Test
  void dotEnvNeverOverridesTheProcessEnvironment(@TempDir Path dir) throws Exception {
    Path file = dir.resolve(".env");
    Files.write(
        file,
        List.of(
            "# comment",
            "export A=from-file",
            "B=\"quoted # not a comment\"",
            "C=plain # trailing comment",
            "garbage line"));
    Environment env = Environment.load(file, Map.of("A", "from-process"));
    assertThat(env.get("A")).contains("from-process");
    assertThat(env.get("B")).contains("quoted # not a comment");
    assertThat(env.get("C")).contains("plain");
    assertThat(Environment.load(dir.resolve("missing"), Map.of()).get("A")).isEmpty();
  }

  @Test
  void secretsResolveWithoutEverDescribingTheirValue() {
    Secrets secrets =
        new Secrets(new Environment(Map.of("TOKEN", "s3cret", "PALLAS_SECRET_argos__token", "k")));
    assertThat(secrets.resolve(new SecretValue(null, "TOKEN", null))).contains("s3cret");
    SecretValue ref = new SecretValue(null, null, new SecretValue.SecretKeyRef("argos", "token"));
    assertThat(secrets.resolve(ref)).contains("k");
    assertThat(secrets.resolve(new SecretValue(null, "UNSET", null))).isEmpty();
    assertThat(Secrets.describe(new SecretValue("inline-secret", null, null)))
        .doesNotContain("inline-secret");
    assertThat(Secrets.describe(ref)).contains("PALLAS_SECRET_argos__token").doesNotContain("k\"");
  }
}
