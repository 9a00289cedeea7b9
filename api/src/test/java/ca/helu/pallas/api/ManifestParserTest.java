package ca.helu.pallas.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ca.helu.pallas.api.validation.Rules;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class ManifestParserTest {
  private static final String HEAD =
      """
      apiVersion: pallas.helu.ca/v1alpha1
      kind: PallasDeployment
      metadata: {name: test}
      """;

  private static List<String> problems(String yaml) {
    try {
      ManifestParser.parse(yaml, "test.yaml");
    } catch (InvalidDeploymentException e) {
      assertThat(e.getMessage()).contains("test.yaml");
      return e.problems();
    }
    throw new AssertionError("expected the manifest to be rejected:\n" + yaml);
  }

  /**
   * A manifest is read no further than what one Kubernetes object may hold, and refused by name
   * past it before any of it is parsed (issue 16 §5: an 8 MiB one took 18 s, 50 MiB did not end,
   * and {@code -f /dev/zero} ended in an OutOfMemoryError).
   */
  @Test
  void aManifestPastTheLimitIsRefusedBeforeItIsParsed() throws Exception {
    String padded = HEAD + "spec:\n  defaultModel: passthrough\n  agents: [{name: a}]\n# ";
    String eightMib = padded + "x".repeat(8 << 20);
    assertThat(problems(eightMib))
        .containsExactly(
            "the manifest is larger than 1.5 MiB (1572864 bytes), the most one Kubernetes object"
                + " may hold; it is not parsed");
    // bytes, not characters: 800 Ki characters of two bytes each are past it too
    assertThat(problems(padded + "\u00e9".repeat(800 << 10))).hasSize(1);

    assertThatThrownBy(() -> ManifestParser.read(Path.of("/dev/zero")))
        .isInstanceOf(InvalidDeploymentException.class)
        .hasMessageContaining("/dev/zero")
        .hasMessageContaining("larger than 1.5 MiB");
  }

  @Test
  void aManifestJustUnderTheLimitIsRead() {
    StringBuilder yaml =
        new StringBuilder(HEAD + "spec:\n  defaultModel: passthrough\n  agents:\n");
    String instruction = "i".repeat(25_000);
    for (int i = 0; i < 62; i++) {
      yaml.append("    - {name: a").append(i).append(", instruction: ").append(instruction);
      yaml.append("}\n");
    }
    assertThat(yaml.length())
        .isBetween(ManifestParser.MAX_MANIFEST_BYTES - 100_000, ManifestParser.MAX_MANIFEST_BYTES);
    PallasDeployment d = ManifestParser.parse(yaml.toString(), "test.yaml");
    assertThat(d.getSpec().effectiveAgents()).hasSize(62);
  }

  @Test
  void defaultsFollowTheOriginalPallas() {
    PallasDeployment d =
        ManifestParser.parse(
            HEAD
                + """
                spec:
                  defaultModel: passthrough
                  agents:
                    - name: a
                    - name: tech_research
                      port: 9000
                    - name: c
                """,
            "t");
    PallasDeploymentSpec s = d.getSpec();
    assertThat(s.effectiveVersion()).isEqualTo("1.0.0");
    assertThat(s.effectiveRegistry().effectivePort()).isEqualTo(24200);
    assertThat(s.effectiveModelCapabilities().effectiveContextWindow()).isEqualTo(131072);
    assertThat(s.effectiveModelCapabilities().effectiveMaxOutputTokens()).isEqualTo(16384);
    assertThat(s.effectiveModelCapabilities().effectiveVision()).isFalse();
    List<AgentSpec> agents = s.effectiveAgents();
    assertThat(agents).extracting(s::portOf).containsExactly(24201, 9000, 24203);
    assertThat(agents.get(0).effectiveInstanceScope()).isEqualTo(InstanceScope.SHARED);
    assertThat(agents.get(0).effectiveTitle()).isEqualTo("A");
    assertThat(agents.get(0).effectiveRequestParams().effectiveMaxIterations()).isEqualTo(20);
  }

  @Test
  void kubernetesResourcesParse() {
    PallasDeployment d =
        ManifestParser.parse(
            HEAD
                + """
                spec:
                  defaultModel: passthrough
                  agents:
                    - name: a
                      resources: {requests: {cpu: 250m, memory: 300Mi}, limits: {memory: 1Gi}}
                """,
            "t");
    var resources = d.getSpec().effectiveAgents().get(0).resources();
    assertThat(resources.getRequests().get("cpu").toString()).isEqualTo("250m");
    assertThat(resources.getLimits().get("memory").toString()).isEqualTo("1Gi");
  }

  /**
   * Where agents validate OIDC tokens, passing a caller's token on to a server is refused unless
   * the spec allows it in so many words (issue 18 §3; CelRulesIT holds the CRD to the same).
   */
  @Test
  void tokenPassthroughWithOidcNeedsAnExplicitAllowance() {
    String fleet =
        HEAD
            + """
            spec:
              defaultModel: passthrough
              auth: {oidc: {issuerUrl: 'https://k/realms/p'ALLOW}}
              mcpServers: [{name: s, url: 'http://s:1/mcp', forwardInboundAuth: true}]
              agents: [{name: a, servers: [s]}]
            """;
    assertThat(problems(fleet.replace("ALLOW", "")))
        .containsExactly("spec.mcpServers: " + Rules.FORWARDING_REFUSED);
    assertThat(ManifestParser.parse(fleet.replace("ALLOW", ", allowForwarding: true"), "ok.yaml"))
        .isNotNull();
    assertThat(
            ManifestParser.parse(
                fleet.replace("ALLOW", "").replace("forwardInboundAuth: true", "headers: []"),
                "ok.yaml"))
        .isNotNull();
  }

  /**
   * A server's token exchange (issue 18 §3): by the agents' own client of the OIDC issuer, whose
   * secret is never inline; for an audience or a resource; instead of forwarding and of an
   * Authorization header of its own (CelRulesIT holds the CRD to the same).
   */
  @Test
  void tokenExchangeNeedsTheAgentsClientAndExcludesTheOtherCredentials() {
    String fleet =
        HEAD
            + """
            spec:
              defaultModel: passthrough
              auth: {oidc: {issuerUrl: 'https://k/realms/p', allowForwarding: true CLIENT}}
              mcpServers: [{name: s, url: 'http://s:1/mcp', tokenExchange: EXCHANGE OTHER}]
              agents: [{name: a, servers: [s]}]
            """;
    String client = ", client: {id: agents, secret: {secretKeyRef: {name: agents, key: secret}}}";
    String ok =
        fleet
            .replace("CLIENT", client)
            .replace("EXCHANGE", "{audience: tools, scopes: [tools]}")
            .replace(" OTHER", "");
    assertThat(ManifestParser.parse(ok, "ok.yaml").getSpec().mcpServers().get(0).tokenExchange())
        .isEqualTo(new TokenExchangeSpec("tools", null, List.of("tools")));
    assertThat(problems(ok.replace(client, "")))
        .containsExactly("spec.mcpServers: " + Rules.EXCHANGE_NEEDS_CLIENT);
    assertThat(problems(ok.replace("secretKeyRef: {name: agents, key: secret}", "value: hunter2")))
        .containsExactly("spec.auth.oidc.client.secret: " + Rules.INLINE_CLIENT_SECRET);
    assertThat(problems(ok.replace("{audience: tools, scopes: [tools]}", "{scopes: [tools]}")))
        .containsExactly(
            "spec.mcpServers[0].tokenExchange: set audience, resource or both: whom the exchanged"
                + " token is for");
    assertThat(problems(ok.replace("{audience: tools,", "{resource: 'not a url',")))
        .singleElement(org.assertj.core.api.InstanceOfAssertFactories.STRING)
        .startsWith("spec.mcpServers[0].tokenExchange.resource:");
    assertThat(
            problems(ok.replace("scopes: [tools]}", "scopes: [tools]}, forwardInboundAuth: true")))
        .containsExactly(
            "spec.mcpServers[0]: set at most one of tokenExchange and forwardInboundAuth");
    assertThat(
            problems(
                ok.replace(
                    "scopes: [tools]}",
                    "scopes: [tools]}, headers: [{name: Authorization, value: 'Bearer x'}]")))
        .containsExactly(
            "spec.mcpServers[0]: tokenExchange sends the exchanged token as the Authorization"
                + " header: headers may not set one too");
  }

  @Test
  void aSecondYamlDocumentIsRefused() {
    assertThat(
            problems(HEAD + "spec: {defaultModel: passthrough, agents: [{name: a}]}\n---\n" + HEAD))
        .containsExactly("the file holds more than one YAML document; give one manifest");
  }

  @Test
  void iconSizesAcceptAStringOrAnArray() {
    PallasDeployment d =
        ManifestParser.parse(
            HEAD
                + """
                spec:
                  defaultModel: passthrough
                  agents:
                    - name: a
                      icons: [{src: a.svg, sizes: any}, {src: b.png, sizes: [48x48, 96x96]}]
                """,
            "t");
    List<Icon> icons = d.getSpec().effectiveAgents().get(0).effectiveIcons();
    assertThat(icons.get(0).sizes()).containsExactly("any");
    assertThat(icons.get(1).sizes()).containsExactly("48x48", "96x96");
  }

  @Test
  void aStatusIsReadAndItsMistakesNamedWithTheirPath() {
    String withStatus =
        HEAD
            + """
            spec:
              defaultModel: passthrough
              agents: [{name: a}]
            status:
              observedGeneration: 3
              conditions:
                - {type: Ready, status: "True", reason: AllAgentsReady}
              agents: [{name: a, readyReplicas: 1, replicas: 1}]
            """;
    PallasDeployment d = ManifestParser.parse(withStatus, "t");
    assertThat(d.getStatus().observedGeneration()).isEqualTo(3L);
    assertThat(d.getStatus().conditions().get(0).getReason()).isEqualTo("AllAgentsReady");
    assertThat(d.getStatus().agents().get(0).readyReplicas()).isEqualTo(1);
    assertThat(problems(withStatus.replace("readyReplicas: 1", "readyReplica: 1")))
        .singleElement()
        .asString()
        .startsWith("status.agents[0].readyReplica: unknown field 'readyReplica'");
    assertThat(
            ManifestParser.parse(
                    HEAD + "spec: {defaultModel: passthrough, agents: [{name: a}]}\n", "t")
                .getStatus())
        .isNull();
  }

  @Test
  void unknownFieldIsNamedWithItsPath() {
    assertThat(
            problems(
                HEAD
                    + """
                    spec:
                      defaultModel: passthrough
                      agents:
                        - name: a
                          instructon: typo
                    """))
        .singleElement()
        .asString()
        .startsWith("spec.agents[0].instructon: unknown field 'instructon'")
        .contains("instruction");
  }

  @Test
  void wrongTypeAndBadEnumAreNamed() {
    assertThat(
            problems(
                HEAD
                    + """
                    spec:
                      defaultModel: passthrough
                      agents:
                        - name: a
                          port: twelve
                    """))
        .singleElement()
        .asString()
        .contains("spec.agents[0].port")
        .contains("twelve");
    assertThat(
            problems(
                HEAD
                    + """
                    spec:
                      defaultModel: passthrough
                      agents:
                        - name: a
                          instanceScope: global
                    """))
        .singleElement()
        .asString()
        .contains("spec.agents[0].instanceScope")
        .contains("'global'")
        .contains("shared, connection, request");
  }

  @Test
  void badYamlSaysWhere() {
    assertThat(problems("kind: a: b\n"))
        .singleElement()
        .asString()
        .contains("not valid YAML at line");
  }

  @Test
  void badNamesDuplicatesAndPortsAreRejected() {
    List<String> p =
        problems(
            HEAD
                + """
                spec:
                  defaultModel: passthrough
                  registry: {port: 24200}
                  mcpServers:
                    - {name: Argos, url: http://a/mcp}
                    - {name: same, url: ftp://x}
                  agents:
                    - name: dup
                      port: 24200
                    - name: dup
                      port: 24300
                    - name: other
                      port: 24300
                    - name: same
                      port: 70000
                """);
    assertThat(p)
        .anyMatch(m -> m.startsWith("spec.mcpServers[0].name: 'Argos' must be lower-case"))
        .anyMatch(m -> m.startsWith("spec.mcpServers[1].url: 'ftp://x' must be an http"))
        .anyMatch(m -> m.equals("spec.agents[1].name: 'dup' duplicates spec.agents[0]"))
        .anyMatch(m -> m.startsWith("spec.agents[3].name: 'same' is also the name of"))
        .anyMatch(m -> m.equals("spec.agents[0].port: 24200 is already used by spec.registry.port"))
        .anyMatch(
            m -> m.equals("spec.agents[2].port: 24300 is already used by spec.agents[1].port"))
        .anyMatch(m -> m.equals("spec.agents[3].port: 70000 must be between 1 and 65535"));
  }

  @Test
  void referencesMustNameSomething() {
    List<String> p =
        problems(
            HEAD
                + """
                spec:
                  defaultModel: passthrough
                  agents:
                    - name: a
                      servers: [nowhere, a]
                      dependsOn: [ghost]
                """);
    assertThat(p)
        .contains(
            "spec.agents[0].servers[0]: 'nowhere' names no entry of spec.mcpServers or spec.agents",
            "spec.agents[0].servers[1]: 'a' is the agent itself",
            "spec.agents[0].dependsOn[0]: 'ghost' names no entry of spec.agents");
  }

  @Test
  void dependencyCyclesAreRejectedThroughServersAndDependsOn() {
    assertThat(
            problems(
                HEAD
                    + """
                    spec:
                      defaultModel: passthrough
                      agents:
                        - {name: a, servers: [b]}
                        - {name: b, dependsOn: [c]}
                        - {name: c, servers: [a]}
                    """))
        .singleElement()
        .asString()
        .startsWith("spec.agents: dependency cycle a -> b -> c -> a");
  }

  @Test
  void secretsModelsAndParamsAreChecked() {
    List<String> p =
        problems(
            HEAD
                + """
                spec:
                  providers:
                    openai: {apiKey: {value: x, env: Y}}
                  mcpServers:
                    - name: s
                      url: http://s/mcp
                      headers:
                        - {name: "Bad Header", value: v}
                        - {name: X-Token}
                      maxConcurrentCalls: 0
                  agents:
                    - name: a
                    - name: b
                      model: gpt4
                      description: ""
                      requestParams: {temperature: 3, maxIterations: 0, maxParallelToolCalls: 1001}
                """);
    assertThat(p)
        .contains(
            "spec.providers.openai.apiKey: set exactly one of value, env and secretKeyRef",
            "spec.mcpServers[0].headers[0].name: 'Bad Header' is not a valid HTTP header name",
            "spec.mcpServers[0].headers[1]: set exactly one of value and valueFrom",
            "spec.agents[0].model: required when spec.defaultModel is not set",
            "spec.agents[1].requestParams.temperature: 3.0 must be between 0 and 2",
            "spec.agents[1].requestParams.maxIterations: 0 must be between 1 and 1000",
            "spec.agents[1].requestParams.maxParallelToolCalls: 1001 must be between 1 and 1000",
            "spec.mcpServers[0].maxConcurrentCalls: 0 must be between 1 and 100000")
        .anyMatch(m -> m.startsWith("spec.agents[1].model: 'gpt4' is not a model"))
        .anyMatch(m -> m.startsWith("spec.agents[1].description: must be 1 to 100 characters"));
  }

  @Test
  void authNeedsExactlyOneModeAndChecksItsFields() {
    assertThat(
            problems(
                HEAD
                    + """
                    spec:
                      defaultModel: passthrough
                      agents: [{name: a}]
                      auth:
                        oidc: {issuerUrl: "keycloak/realms/x", audience: " ", requiredScopes: ["a b"]}
                        staticTokens: {secretName: Bad_Name}
                    """))
        .contains(
            "spec.auth: set exactly one of oidc and staticTokens",
            "spec.auth.oidc.audience: must not be blank")
        .anyMatch(m -> m.startsWith("spec.auth.oidc.issuerUrl: 'keycloak/realms/x' must be"))
        .anyMatch(m -> m.startsWith("spec.auth.oidc.requiredScopes[0]: 'a b' is not an OAuth"))
        .anyMatch(m -> m.startsWith("spec.auth.staticTokens.secretName: 'Bad_Name' is not"));
    assertThat(problems(HEAD + "spec: {defaultModel: passthrough, agents: [{name: a}], auth: {}}"))
        .contains("spec.auth: set exactly one of oidc and staticTokens");
    PallasDeployment ok =
        ManifestParser.parse(
            HEAD
                + """
                spec:
                  defaultModel: passthrough
                  agents: [{name: a}]
                  auth:
                    oidc:
                      issuerUrl: https://keycloak.example/realms/pallas
                      audience: https://agents.example/{agent}
                      requiredScopes: ["agents:call"]
                """,
            "test.yaml");
    AuthSpec auth = ok.getSpec().auth();
    assertThat(auth.effectiveOpenHealth()).isTrue();
    assertThat(auth.oidc().audienceOf("a", "http://a:1/mcp")).isEqualTo("https://agents.example/a");
  }

  @Test
  void apiVersionKindAndNameAreRequired() {
    assertThat(
            problems(
                "apiVersion: v1\nkind: Pod\nspec: {defaultModel: passthrough, agents: [{name: a}]}"))
        .contains(
            "apiVersion: 'v1' must be pallas.helu.ca/v1alpha1",
            "kind: 'Pod' must be PallasDeployment",
            "metadata.name: required");
  }

  @Test
  void missingFileIsAClearError() {
    assertThatThrownBy(() -> ManifestParser.read(Path.of("does-not-exist.yaml")))
        .isInstanceOf(InvalidDeploymentException.class)
        .hasMessageContaining("does-not-exist.yaml")
        .hasMessageContaining("cannot read file");
  }
}
