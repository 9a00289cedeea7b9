package ca.helu.pallas.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * The one walk over the fields that hold secrets: what the operator watches, hands on and moves.
 */
class SecretFieldsTest {
  private static final PallasDeploymentSpec SPEC =
      ManifestParser.parse(
              """
              apiVersion: pallas.helu.ca/v1alpha1
              kind: PallasDeployment
              metadata: {name: fleet}
              spec:
                providers:
                  openai: {apiKey: {secretKeyRef: {name: llm, key: openai}}}
                  anthropic: {apiKey: {value: sk-inline}}
                mcpServers:
                  - name: s
                    url: http://s/mcp
                    headers:
                      - {name: X-Plain, value: plain}
                      - {name: X-Token, valueFrom: {value: tok-inline}}
                      - {name: X-Env, valueFrom: {env: TOKEN}}
                  - {name: t, url: http://t/mcp, headers: [{name: A, valueFrom: {secretKeyRef: {name: t, key: k}}}]}
                store: {secretName: db}
                auth: {staticTokens: {secretName: callers}}
                tracing: {endpoint: http://jaeger:4318, headers: {name: otel, key: headers}}
                agents:
                  - {name: a, model: openai.m, servers: [s]}
                  - {name: b, model: anthropic.m, servers: [t]}
              """,
              "secrets.yaml")
          .getSpec();

  @Test
  void everyFieldHoldingASecretWithItsPathAndItsAgents() {
    AgentSpec a = SPEC.agent("a").orElseThrow();
    AgentSpec b = SPEC.agent("b").orElseThrow();
    assertThat(SecretFields.values(SPEC))
        .extracting(SecretFields.Value::field)
        .containsExactly(
            "spec.providers.openai.apiKey",
            "spec.providers.anthropic.apiKey",
            "spec.mcpServers[0].headers[1].valueFrom",
            "spec.mcpServers[0].headers[2].valueFrom",
            "spec.mcpServers[1].headers[0].valueFrom",
            "spec.tracing.headers");
    assertThat(SecretFields.values(SPEC))
        .filteredOn(v -> v.usedBy().test(a))
        .extracting(SecretFields.Value::field)
        .containsExactly(
            "spec.providers.openai.apiKey",
            "spec.mcpServers[0].headers[1].valueFrom",
            "spec.mcpServers[0].headers[2].valueFrom",
            "spec.tracing.headers");
    assertThat(SecretFields.values(SPEC))
        .filteredOn(v -> v.usedBy().test(b))
        .extracting(SecretFields.Value::field)
        .containsExactly(
            "spec.providers.anthropic.apiKey",
            "spec.mcpServers[1].headers[0].valueFrom",
            "spec.tracing.headers");
    assertThat(SecretFields.secretNames(SPEC)).containsExactly("callers", "db", "llm", "otel", "t");
  }

  /**
   * The registry's call_tool calls the servers the agents call, with their headers: it needs those,
   * and no provider key, no exporter's token, nothing of a server no agent calls.
   */
  @Test
  void theRegistryNeedsTheHeadersOfTheServersTheAgentsCallOnly() {
    PallasDeploymentSpec spec =
        ManifestParser.parse(
                """
                apiVersion: pallas.helu.ca/v1alpha1
                kind: PallasDeployment
                metadata: {name: fleet}
                spec:
                  providers: {openai: {apiKey: {secretKeyRef: {name: llm, key: openai}}}}
                  mcpServers:
                    - {name: called, url: http://c/mcp, headers: [{name: A, valueFrom: {secretKeyRef: {name: c, key: k}}}]}
                    - {name: idle, url: http://i/mcp, headers: [{name: A, valueFrom: {secretKeyRef: {name: i, key: k}}}]}
                  tracing: {endpoint: http://jaeger:4318, headers: {name: otel, key: headers}}
                  agents: [{name: a, model: openai.m, servers: [called]}]
                """,
                "registry.yaml")
            .getSpec();
    assertThat(SecretFields.values(spec))
        .filteredOn(SecretFields.Value::usedByRegistry)
        .extracting(SecretFields.Value::field)
        .containsExactly("spec.mcpServers[0].headers[0].valueFrom");
  }

  /**
   * The agents' own OIDC client secret (docs/runtime.md, "Downstream credentials") goes to the
   * agents that exchange tokens and to the registry, whose call_tool exchanges as they do; never to
   * an agent that does not.
   */
  @Test
  void theAgentsClientSecretGoesToTheExchangingAgentsAndTheRegistryOnly() {
    PallasDeploymentSpec spec =
        ManifestParser.parse(
                """
                apiVersion: pallas.helu.ca/v1alpha1
                kind: PallasDeployment
                metadata: {name: fleet}
                spec:
                  defaultModel: passthrough
                  auth:
                    oidc:
                      issuerUrl: https://issuer.example/realms/pallas
                      audience: "https://agents.example/{agent}"
                      client: {id: pallas-agents, secret: {secretKeyRef: {name: agents, key: s}}}
                  mcpServers:
                    - {name: exchanged, url: http://e/mcp, tokenExchange: {audience: e}}
                    - {name: plain, url: http://p/mcp}
                  agents:
                    - {name: swapper, servers: [exchanged]}
                    - {name: other, servers: [plain]}
                """,
                "client.yaml")
            .getSpec();
    SecretFields.Value secret =
        SecretFields.values(spec).stream()
            .filter(v -> v.field().equals("spec.auth.oidc.client.secret"))
            .findFirst()
            .orElseThrow();
    assertThat(secret.usedBy().test(spec.agent("swapper").orElseThrow())).isTrue();
    assertThat(secret.usedBy().test(spec.agent("other").orElseThrow())).isFalse();
    assertThat(secret.usedByRegistry()).isTrue();
    assertThat(SecretFields.secretNames(spec)).containsExactly("agents");
  }

  @Test
  void inlineValuesMoveToTheFleetsSecretAndNothingElseChanges() {
    Map<String, String> moved = new TreeMap<>();
    PallasDeploymentSpec rendered = SecretFields.withoutInlineValues(SPEC, "fleet-inline", moved);
    assertThat(moved)
        .containsExactly(
            Map.entry("mcpServers.s.headers.1", "tok-inline"),
            Map.entry("providers.anthropic.apiKey", "sk-inline"));
    assertThat(rendered.effectiveProviders().anthropic().apiKey())
        .isEqualTo(
            new SecretValue(
                null,
                null,
                new SecretValue.SecretKeyRef("fleet-inline", "providers.anthropic.apiKey")));
    assertThat(
            rendered
                .mcpServer("s")
                .orElseThrow()
                .effectiveHeaders()
                .get(1)
                .valueFrom()
                .secretKeyRef())
        .isEqualTo(new SecretValue.SecretKeyRef("fleet-inline", "mcpServers.s.headers.1"));
    assertThat(SecretFields.values(rendered)).noneMatch(v -> v.value().value() != null);
    // everything else as it was
    assertThat(rendered.effectiveAgents()).isEqualTo(SPEC.effectiveAgents());
    assertThat(rendered.effectiveProviders().openai())
        .isEqualTo(SPEC.effectiveProviders().openai());
    assertThat(rendered.tracing()).isEqualTo(SPEC.tracing());
    assertThat(rendered.mcpServer("s").orElseThrow().effectiveHeaders().get(2))
        .isEqualTo(SPEC.mcpServer("s").orElseThrow().effectiveHeaders().get(2));
    assertThat(SecretFields.withoutInlineValues(rendered, "fleet-inline", new TreeMap<>()))
        .isSameAs(rendered);
  }
}
