package ca.helu.pallas.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class ExamplesTest {
  static List<Path> examples() throws IOException {
    try (Stream<Path> files = Files.list(Path.of("..", "examples"))) {
      List<Path> all = files.filter(f -> f.toString().endsWith(".yaml")).sorted().toList();
      assertThat(all)
          .extracting(f -> f.getFileName().toString())
          .contains("quickstart.yaml", "ouranos.yaml");
      return all;
    }
  }

  @ParameterizedTest
  @MethodSource("examples")
  void everyExampleParsesAndValidates(Path example) {
    PallasDeployment d = ManifestParser.read(example);
    assertThat(d.getSpec().effectiveAgents()).isNotEmpty();
    for (AgentSpec agent : d.getSpec().effectiveAgents()) {
      assertThat(d.getSpec().modelOf(agent)).as("model of %s", agent.name()).isNotNull();
    }
  }
}
