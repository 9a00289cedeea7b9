package ca.helu.pallas.operator.render;

import static org.assertj.core.api.Assertions.assertThat;

import ca.helu.pallas.api.ManifestParser;
import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.api.SecretValue.SecretKeyRef;
import ca.helu.pallas.api.SecretVariables;
import io.fabric8.kubernetes.api.model.EnvVar;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class FleetRendererTest {
  static final String SPEC =
      """
      apiVersion: pallas.helu.ca/v1alpha1
      kind: PallasDeployment
      metadata: {name: fleet, namespace: ai, uid: u-1}
      spec:
        defaultModel: passthrough
        providers:
          openai: {baseUrl: "http://llm/v1", apiKey: {secretKeyRef: {name: llm, key: openai}}}
          anthropic: {apiKey: {value: sk-inline-anthropic}}
        mcpServers:
          - name: tools
            url: http://tools/mcp
            headers:
              - {name: X-Plain, value: not-secret}
              - {name: Authorization, valueFrom: {value: inline-token}}
          - name: other
            url: http://other/mcp
            headers: [{name: Authorization, valueFrom: {secretKeyRef: {name: other, key: token}}}]
        agents:
          - {name: a, model: openai.qwen3, servers: [tools]}
          - {name: b, model: anthropic.claude-sonnet-4-5, servers: [a, other]}
          - {name: c}
      """;

  static final SecretDigests DIGESTS =
      name ->
          switch (name) {
            case "llm" -> Optional.of(Map.of("openai", "d1"));
            case "other" -> Optional.of(Map.of("token", "d2"));
            default -> Optional.empty();
          };

  static PallasDeployment deployment(String yaml) {
    return ManifestParser.parse(yaml, "test");
  }

  @Test
  void inlineSecretsMoveToTheOwnedSecretAndTheManifestHoldsNoSecretValue() {
    RenderedFleet fleet = FleetRenderer.render(deployment(SPEC), DIGESTS);
    assertThat(fleet.manifestYaml())
        .doesNotContain("sk-inline-anthropic")
        .doesNotContain("inline-token")
        .contains("not-secret")
        .contains("fleet-inline");
    assertThat(fleet.inlineSecretData())
        .containsEntry("providers.anthropic.apiKey", "sk-inline-anthropic")
        .containsEntry("mcpServers.tools.headers.1", "inline-token")
        .hasSize(2);
    PallasDeployment rendered = ManifestParser.parse(fleet.manifestYaml(), "rendered");
    assertThat(rendered.getSpec().effectiveProviders().anthropic().apiKey().secretKeyRef())
        .isEqualTo(new SecretKeyRef("fleet-inline", "providers.anthropic.apiKey"));
    assertThat(rendered.getMetadata().getNamespace()).isEqualTo("ai");
    assertThat(fleet.missingSecrets()).isEmpty();
  }

  @Test
  void eachAgentGetsExactlyTheSecretsItUses() {
    RenderedFleet fleet = FleetRenderer.render(deployment(SPEC), DIGESTS);
    assertThat(fleet.agents().get("a").env())
        .extracting(EnvVar::getName)
        .containsExactlyInAnyOrder(
            SecretVariables.nameFor(new SecretKeyRef("llm", "openai")),
            SecretVariables.nameFor(
                new SecretKeyRef("fleet-inline", "mcpServers.tools.headers.1")));
    assertThat(fleet.agents().get("b").env())
        .extracting(EnvVar::getName)
        .containsExactlyInAnyOrder(
            SecretVariables.nameFor(new SecretKeyRef("fleet-inline", "providers.anthropic.apiKey")),
            SecretVariables.nameFor(new SecretKeyRef("other", "token")));
    assertThat(fleet.agents().get("c").env()).isEmpty();
    EnvVar llm = fleet.agents().get("a").env().get(0);
    assertThat(llm.getValue()).isNull();
    assertThat(fleet.agents().get("b").dependencies()).containsExactly("a");
  }

  @Test
  void missingSecretsAndKeysAreNamedWithTheirField() {
    RenderedFleet fleet =
        FleetRenderer.render(
            deployment(SPEC),
            name -> "llm".equals(name) ? Optional.of(Map.of("wrong", "d")) : Optional.empty());
    assertThat(fleet.missingSecrets())
        .containsExactly(
            "spec.providers.openai.apiKey: Secret 'llm' has no key 'openai'",
            "spec.mcpServers[1].headers[0].valueFrom: Secret 'other' does not exist");
  }

  @Test
  void theHashIsStableAndChangesOnlyForTheAgentThatReadsTheChange() {
    RenderedFleet before = FleetRenderer.render(deployment(SPEC), DIGESTS);
    assertThat(FleetRenderer.render(deployment(SPEC), DIGESTS).agents().get("a").configHash())
        .isEqualTo(before.agents().get("a").configHash());

    RenderedFleet rotated =
        FleetRenderer.render(
            deployment(SPEC),
            name -> "other".equals(name) ? Optional.of(Map.of("token", "new")) : DIGESTS.of(name));
    assertChanged(before, rotated, "b");

    RenderedFleet newUrl =
        FleetRenderer.render(
            deployment(SPEC.replace("http://tools/mcp", "http://tools2/mcp")), DIGESTS);
    assertChanged(before, newUrl, "a");

    RenderedFleet scaled =
        FleetRenderer.render(
            deployment(SPEC.replace("- {name: c}", "- {name: c, replicas: 4}")), DIGESTS);
    assertChanged(before, scaled);

    RenderedFleet peerMoved =
        FleetRenderer.render(
            deployment(SPEC.replace("{name: a, model", "{name: a, port: 9999, model")), DIGESTS);
    assertChanged(before, peerMoved, "a", "b");
  }

  private static void assertChanged(RenderedFleet before, RenderedFleet after, String... changed) {
    for (String agent : before.agents().keySet()) {
      boolean expected = java.util.List.of(changed).contains(agent);
      assertThat(
              !before
                  .agents()
                  .get(agent)
                  .configHash()
                  .equals(after.agents().get(agent).configHash()))
          .as("hash of %s changed", agent)
          .isEqualTo(expected);
    }
  }
}
