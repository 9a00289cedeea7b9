package ca.helu.pallas.runtime.registry;

import static org.assertj.core.api.Assertions.assertThat;

import ca.helu.pallas.api.ManifestParser;
import ca.helu.pallas.api.PallasDeployment;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class RegistryDocumentTest {
  @Test
  void ouranosMatchesSeed000() throws Exception {
    PallasDeployment d = ManifestParser.read(Path.of("../examples/ouranos.yaml"));
    byte[] body =
        RegistryDocument.render(
            d.getSpec(),
            a -> "http://puck.incus:" + d.getSpec().portOf(a) + "/mcp",
            Instant.parse("2026-03-12T10:00:00.123Z"));
    JsonNode servers = new ObjectMapper().readTree(body).get("servers");
    assertThat(servers).hasSize(3);
    JsonNode research = servers.get(0).get("server");
    assertThat(research.get("$schema").asText())
        .isEqualTo("https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json");
    assertThat(research.get("name").asText()).isEqualTo("ca.helu.ouranos/research");
    assertThat(research.get("title").asText()).isEqualTo("Research Agent");
    assertThat(research.get("description").asText())
        .isEqualTo("Web search via Argos and knowledge graph via Neo4j");
    assertThat(research.get("version").asText()).isEqualTo("1.0.0");
    assertThat(research.get("icons").get(0).get("src").asText())
        .isEqualTo("https://daedalus.ouranos.helu.ca/icons/research.svg");
    assertThat(research.get("icons").get(0).get("sizes").get(0).asText()).isEqualTo("any");
    assertThat(research.get("remotes").get(0).get("type").asText()).isEqualTo("streamable-http");
    assertThat(research.get("remotes").get(0).get("url").asText())
        .isEqualTo("http://puck.incus:23031/mcp");
    assertThat(research.get("remotes").get(0).has("headers")).as("no auth, no header").isFalse();
    JsonNode caps = research.get("capabilities");
    assertThat(caps.get("model").asText()).isEqualTo("qwen3-8b-q5");
    assertThat(caps.get("vision").asBoolean()).isFalse();
    assertThat(caps.get("context_window").asInt()).isEqualTo(200000);
    assertThat(caps.get("max_output_tokens").asInt()).isEqualTo(32000);
    JsonNode meta = servers.get(0).get("_meta").get("io.modelcontextprotocol.registry/official");
    assertThat(meta.get("status").asText()).isEqualTo("active");
    assertThat(meta.get("updatedAt").asText()).isEqualTo("2026-03-12T10:00:00Z");
    assertThat(meta.get("isLatest").asBoolean()).isTrue();
    assertThat(servers.get(2).get("server").get("capabilities").get("model").asText())
        .isEqualTo("claude-sonnet-4-5");
  }

  @Test
  void underscoresBecomeHyphensInNames() {
    PallasDeployment d =
        ManifestParser.parse(
            """
            apiVersion: pallas.helu.ca/v1alpha1
            kind: PallasDeployment
            metadata: {name: t}
            spec:
              registry: {namespace: com.example.project}
              defaultModel: passthrough
              agents: [{name: tech_research}]
            """,
            "t");
    assertThat(RegistryDocument.serverName(d.getSpec(), d.getSpec().effectiveAgents().get(0)))
        .isEqualTo("com.example.project/tech-research");
  }

  /** With spec.auth each remote names the header a client must send (server.json 2025-12-11). */
  @Test
  void withInboundAuthEachRemoteRequiresASecretAuthorizationHeader() throws Exception {
    for (String auth :
        List.of(
            "oidc: {issuerUrl: 'https://idp.example/realms/pallas'}",
            "staticTokens: {secretName: tokens}")) {
      PallasDeployment d =
          ManifestParser.parse(
              """
              apiVersion: pallas.helu.ca/v1alpha1
              kind: PallasDeployment
              metadata: {name: t}
              spec:
                defaultModel: passthrough
                auth: {%s}
                agents: [{name: a}]
              """
                  .formatted(auth),
              "t");
      JsonNode header =
          new ObjectMapper()
              .readTree(RegistryDocument.render(d.getSpec(), a -> "http://a/mcp", Instant.now()))
              .at("/servers/0/server/remotes/0/headers/0");
      assertThat(header.get("name").asText()).isEqualTo("Authorization");
      assertThat(header.get("isRequired").asBoolean()).isTrue();
      assertThat(header.get("isSecret").asBoolean()).isTrue();
      assertThat(header.get("description").asText()).startsWith("Bearer <");
    }
  }
}
