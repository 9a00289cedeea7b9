package ca.helu.pallas.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.core.JsonProcessingException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class AgentGraphTest {
  private static PallasDeploymentSpec spec(String agents) {
    try {
      return ManifestParser.yamlMapper()
          .readValue(
              "{defaultModel: passthrough, agents: " + agents + "}", PallasDeploymentSpec.class);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException(e);
    }
  }

  @Test
  void dependenciesStartInEarlierWaves() {
    var spec = ManifestParser.read(Path.of("../examples/ouranos.yaml")).getSpec();
    AgentGraph graph = AgentGraph.of(spec);
    assertThat(graph.waves())
        .containsExactly(List.of("research", "engineering"), List.of("orchestrator"));
    assertThat(graph.dependencies("orchestrator")).containsExactly("research", "engineering");
    assertThat(graph.dependencies("research")).isEmpty();
    assertThat(graph.cycle()).isEmpty();
  }

  @Test
  void dependsOnAndAgentServersBothCountButMcpServersDoNot() {
    AgentGraph graph =
        AgentGraph.of(
            spec(
                "[{name: a, servers: [b, argos]}, {name: b, dependsOn: [c]}, {name: c},"
                    + " {name: d, dependsOn: [c], servers: [a]}]"));
    assertThat(graph.dependencies("a")).containsExactly("b");
    assertThat(graph.dependencies("d")).containsExactly("c", "a");
    assertThat(graph.waves())
        .containsExactly(List.of("c"), List.of("b"), List.of("a"), List.of("d"));
  }

  @Test
  void aCycleIsNamedAndHasNoWaves() {
    AgentGraph graph =
        AgentGraph.of(
            spec(
                "[{name: a, dependsOn: [b]}, {name: b, servers: [c]}, {name: c, dependsOn: [a]},"
                    + " {name: d}]"));
    assertThat(graph.cycle()).contains("a -> b -> c -> a");
    assertThatThrownBy(graph::waves).hasMessageContaining("a -> b -> c -> a");
  }
}
