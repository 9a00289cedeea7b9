package ca.helu.pallas.operator.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Runs a documented command line (helm, kubectl or curl) from the repository's root as a user
 * would, with the real binaries, against the API server of a kubeconfig, and no helm configuration
 * of the user's.
 */
public final class DocCommands {
  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

  private DocCommands() {}

  /** Its output; fails the test on a non-zero exit. */
  public static String run(String command, Path kubeconfig) throws Exception {
    List<String> words = new ArrayList<>(List.of(command.split("\\s+")));
    switch (words.get(0)) {
      case "helm" -> words.set(0, GoBinaries.path("helm").toString());
      case "kubectl" -> words.set(0, GoBinaries.path("kubectl").toString());
      case "curl" -> {}
      default -> throw new AssertionError("unexpected command in the docs: " + command);
    }
    ProcessBuilder builder = new ProcessBuilder(words).directory(ROOT.toFile());
    builder.environment().put("KUBECONFIG", kubeconfig.toString());
    Path home = Files.createTempDirectory("helm-home");
    builder.environment().put("HELM_CONFIG_HOME", home.resolve("config").toString());
    builder.environment().put("HELM_CACHE_HOME", home.resolve("cache").toString());
    builder.environment().put("HELM_DATA_HOME", home.resolve("data").toString());
    Process p = builder.redirectErrorStream(words.get(0).endsWith("helm")).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor()).as("%s:%n%s", command, out).isZero();
    return out;
  }
}
