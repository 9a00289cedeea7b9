package ca.helu.pallas.operator.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The real helm (built from the Go module proxy by tools/go-binaries.sh) on the chart in
 * helm/pallas-operator.
 */
public final class Helm {
  public static final Path CHART = Path.of("..", "helm", "pallas-operator").toAbsolutePath();
  public static final String RELEASE = "pallas";
  public static final String NAMESPACE = "pallas-system";
  private static final YAMLMapper YAML = new YAMLMapper();

  private Helm() {}

  /**
   * What helm printed and its exit code: output is stdout and stderr, yaml stdout only (helm warns
   * on stderr that the chart links the CRD from crds/).
   */
  public record Result(int exitCode, String output, String yaml) {}

  public static Result run(List<String> args) throws IOException, InterruptedException {
    Path helm = GoBinaries.path("helm");
    List<String> command = new ArrayList<>(List.of(helm.toString()));
    command.addAll(args);
    Path stderr = Files.createTempFile("helm", ".err");
    ProcessBuilder builder = new ProcessBuilder(command).redirectError(stderr.toFile());
    // no user configuration or repositories: only what the test gives
    Path home = Files.createTempDirectory("helm-home");
    builder.environment().put("HELM_CONFIG_HOME", home.resolve("config").toString());
    builder.environment().put("HELM_CACHE_HOME", home.resolve("cache").toString());
    builder.environment().put("HELM_DATA_HOME", home.resolve("data").toString());
    Process p = builder.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    int exit = p.waitFor();
    String err = Files.readString(stderr);
    Files.delete(stderr);
    return new Result(exit, err + out, out);
  }

  /** helm template of the chart with these extra arguments; fails on a non-zero exit. */
  public static Rendered template(String... args) throws IOException, InterruptedException {
    return release(RELEASE, NAMESPACE, args);
  }

  public static List<String> templateArgs(String... args) {
    return templateArgs(RELEASE, NAMESPACE, args);
  }

  /** helm template of a release of this name in this namespace. */
  public static Rendered release(String release, String namespace, String... args)
      throws IOException, InterruptedException {
    Result r = run(templateArgs(release, namespace, args));
    if (r.exitCode() != 0) {
      throw new AssertionError("helm template failed:\n" + r.output());
    }
    return new Rendered(r.yaml());
  }

  private static List<String> templateArgs(String release, String namespace, String... args) {
    List<String> command =
        new ArrayList<>(
            List.of(
                "template",
                release,
                CHART.toString(),
                "--namespace",
                namespace,
                "--kube-version",
                KubeCluster.VERSION));
    command.addAll(List.of(args));
    return command;
  }

  /** A rendered chart: the YAML stream and its objects as JSON trees. */
  public record Rendered(String yaml, List<JsonNode> objects) {
    Rendered(String yaml) {
      this(yaml, parse(yaml));
    }

    private static List<JsonNode> parse(String yaml) {
      List<JsonNode> objects = new ArrayList<>();
      for (String doc : yaml.split("(?m)^---\\s*$")) {
        try {
          JsonNode node = YAML.readTree(doc);
          if (node != null && node.has("kind")) {
            objects.add(node);
          }
        } catch (IOException e) {
          throw new AssertionError("helm printed invalid YAML:\n" + doc, e);
        }
      }
      return objects;
    }

    public List<JsonNode> ofKind(String kind) {
      return objects.stream().filter(o -> o.get("kind").asText().equals(kind)).toList();
    }

    /** The one object of this kind and name. */
    public JsonNode get(String kind, String name) {
      List<JsonNode> found =
          ofKind(kind).stream().filter(o -> o.at("/metadata/name").asText().equals(name)).toList();
      if (found.size() != 1) {
        throw new AssertionError(found.size() + " " + kind + " named " + name + " in:\n" + yaml);
      }
      return found.get(0);
    }
  }
}
