package ca.helu.pallas.runtime.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import ca.helu.pallas.api.ManifestParser;
import ca.helu.pallas.api.PallasDeploymentSpec;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The card an agent publishes, from the manifest, with its defaults. */
class AgentCardTest {
  @Test
  void ouranosResearchCard() {
    PallasDeploymentSpec spec = ManifestParser.read(Path.of("../examples/ouranos.yaml")).getSpec();
    AgentCard card = AgentCard.of(spec, spec.agent("research").orElseThrow());
    assertThat(card.name()).isEqualTo("research");
    assertThat(card.title()).isEqualTo("Research Agent");
    assertThat(card.description()).isEqualTo("Web search via Argos and knowledge graph via Neo4j");
    assertThat(card.version()).isEqualTo("1.0.0");
    assertThat(card.icons()).hasSize(1);
    assertThat(card.capabilities())
        .isEqualTo(new AgentCard.Capabilities("qwen3-8b-q5", false, 200000, 32000));
    assertThat(card.capabilities().contextChars()).isEqualTo(800_000L);
  }

  @Test
  void defaultsAndTheModelWithoutItsProvider() {
    String manifest =
        """
        apiVersion: pallas.helu.ca/v1alpha1
        kind: PallasDeployment
        metadata: {name: cards}
        spec:
          defaultModel: passthrough
          modelCapabilities: {vision: true}
          agents:
            - {name: helper}
            - {name: writer, model: anthropic.claude-sonnet-4-5, title: Writer}
        """;
    PallasDeploymentSpec spec = ManifestParser.parse(manifest, "cards").getSpec();
    AgentCard helper = AgentCard.of(spec, spec.agent("helper").orElseThrow());
    assertThat(helper.description()).isEqualTo("Pallas agent helper");
    assertThat(helper.version()).isEqualTo(spec.effectiveVersion());
    assertThat(helper.icons()).isEmpty();
    assertThat(helper.capabilities())
        .isEqualTo(new AgentCard.Capabilities("passthrough", true, 131072, 16384));
    AgentCard writer = AgentCard.of(spec, spec.agent("writer").orElseThrow());
    assertThat(writer.title()).isEqualTo("Writer");
    assertThat(writer.capabilities().model()).isEqualTo("claude-sonnet-4-5");
  }
}
