package ca.helu.pallas.operator.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ca.helu.pallas.api.DeploymentValidator;
import ca.helu.pallas.api.ManifestParser;
import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.operator.testing.KubeCluster;
import com.fasterxml.jackson.core.JsonProcessingException;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * One manifest per OpenAPI constraint and CEL rule of the CRD: the API server refuses each with a
 * message naming the field, and the runtime's validator (serve -f) refuses the same manifest.
 */
class CelRulesIT {
  private static final KubernetesClient K8S = KubeCluster.shared().client();
  private static String namespace;

  @BeforeAll
  static void namespace() {
    namespace = KubeCluster.shared().namespace("cel");
  }

  static Stream<Arguments> rules() {
    return Stream.of(
        rule(
            "name starts with a digit",
            "1fleet",
            "agents: [{name: a}]",
            "metadata.name must start with a letter"),
        rule(
            "name too long for {name}-registry",
            "a".repeat(55),
            "agents: [{name: a}]",
            "metadata.name must be at most 54 characters"),
        rule(
            "name and agent too long for a Service",
            "fleet",
            "agents: [{name: " + "b".repeat(60) + "}]",
            "spec.agents: Invalid value",
            "must be at most 63 characters (it names the agent's Service)"),
        rule(
            "agent name pattern",
            "fleet",
            "agents: [{name: Bad}]",
            "spec.agents[0].name",
            "should match"),
        rule(
            "port range",
            "fleet",
            "agents: [{name: a, port: 70000}]",
            "spec.agents[0].port",
            "less than or equal to 65535"),
        rule(
            "agent names unique with _ read as -",
            "fleet",
            "agents: [{name: a_b}, {name: a-b}]",
            "spec.agents",
            "agents[].name must be unique"),
        rule(
            "mcpServer names unique",
            "fleet",
            "mcpServers: [{name: s, url: 'http://s/mcp'}, {name: s, url: 'http://t/mcp'}]\n"
                + "  agents: [{name: a}]",
            "spec.mcpServers",
            "mcpServers[].name must be unique"),
        rule(
            "caller limit below 1",
            "fleet",
            "agents: [{name: a, callerLimits: {concurrentCalls: 0}}]",
            "spec.agents[0].callerLimits.concurrentCalls",
            "greater than or equal to 1"),
        rule(
            "networkPolicy peer namespace",
            "fleet",
            "networkPolicy: {from: [{namespace: Not_A_Namespace}]}\n  agents: [{name: a}]",
            "spec.networkPolicy.from[0].namespace",
            "should match"),
        rule(
            "agent named like a server",
            "fleet",
            "mcpServers: [{name: a, url: 'http://s/mcp'}]\n  agents: [{name: a}]",
            "spec.agents",
            "may not share its name with an mcpServers entry"),
        rule(
            "explicit ports unique",
            "fleet",
            "agents: [{name: a, port: 9000}, {name: b, port: 9000}]",
            "spec.agents",
            "agents[].port must be unique"),
        rule(
            "explicit port collides with a default",
            "fleet",
            "agents: [{name: a, port: 24202}, {name: b}]",
            "spec.agents",
            "agents[].port must be unique"),
        rule(
            "agent on the registry port",
            "fleet",
            "registry: {port: 9000}\n  agents: [{name: a, port: 9000}]",
            "spec.agents",
            "no agent may listen on the registry port"),
        rule(
            "servers name something",
            "fleet",
            "agents: [{name: a, servers: [ghost]}]",
            "spec.agents",
            "servers must name entries of mcpServers or agents"),
        rule(
            "dependsOn names an agent",
            "fleet",
            "agents: [{name: a, dependsOn: [ghost]}]",
            "spec.agents",
            "dependsOn must name entries of agents"),
        rule(
            "no agent in its own servers",
            "fleet",
            "agents: [{name: a, servers: [a]}]",
            "spec.agents[0].servers",
            "cannot name itself in servers"),
        rule(
            "no agent in its own dependsOn",
            "fleet",
            "agents: [{name: a, dependsOn: [a]}]",
            "spec.agents[0].dependsOn",
            "cannot depend on itself"),
        rule(
            "a secret has exactly one source",
            "fleet",
            "providers: {openai: {apiKey: {env: KEY, value: inline}}}\n  agents: [{name: a}]",
            "spec.providers.openai.apiKey",
            "set exactly one of value, env and secretKeyRef"),
        rule(
            "a header has a value or a valueFrom",
            "fleet",
            "mcpServers: [{name: s, url: 'http://s/mcp', headers: [{name: X-A}]}]\n"
                + "  agents: [{name: a}]",
            "spec.mcpServers[0].headers[0]",
            "set exactly one of value and valueFrom"),
        rule(
            "server URLs are http(s)",
            "fleet",
            "mcpServers: [{name: s, url: 'ftp://s/mcp'}]\n  agents: [{name: a}]",
            "spec.mcpServers[0].url",
            "must be an http:// or https:// URL with a host"),
        rule(
            "model names a provider or a built-in",
            "fleet",
            "agents: [{name: a, model: gpt-4}]",
            "spec.agents[0].model",
            "should match"),
        rule(
            "every agent has a model",
            "fleet",
            "agents: [{name: a}]",
            "spec.agents",
            "every agent needs a model when defaultModel is not set"),
        rule(
            "at least one agent",
            "fleet",
            "agents: []",
            "spec.agents",
            "should have at least 1 items"),
        rule(
            "temperature range",
            "fleet",
            "agents: [{name: a, requestParams: {temperature: 3}}]",
            "spec.agents[0].requestParams.temperature",
            "less than or equal to 2"),
        rule(
            "tool calls of one answer at once",
            "fleet",
            "agents: [{name: a, requestParams: {maxParallelToolCalls: 0}}]",
            "spec.agents[0].requestParams.maxParallelToolCalls",
            "greater than or equal to 1"),
        rule(
            "calls to a server at once",
            "fleet",
            "mcpServers: [{name: s, url: 'http://s/mcp', maxConcurrentCalls: 100001}]\n"
                + "  agents: [{name: a}]",
            "spec.mcpServers[0].maxConcurrentCalls",
            "less than or equal to 100000"),
        rule(
            "replicas or autoscaling, not both",
            "fleet",
            "agents: [{name: a, replicas: 2, autoscaling: {maxReplicas: 4}}]",
            "spec.agents[0].autoscaling",
            "set replicas or autoscaling, not both"),
        rule(
            "autoscaling has a maximum",
            "fleet",
            "agents: [{name: a, autoscaling: {minReplicas: 2}}]",
            "spec.agents[0].autoscaling.maxReplicas",
            "Required value"),
        rule(
            "autoscaling minimum within the maximum",
            "fleet",
            "agents: [{name: a, autoscaling: {minReplicas: 5, maxReplicas: 4}}]",
            "spec.agents[0].autoscaling.minReplicas",
            "minReplicas must not exceed maxReplicas"),
        rule(
            "autoscaling target of at least one call",
            "fleet",
            "agents: [{name: a, autoscaling: {maxReplicas: 4, targetInFlightCalls: 0}}]",
            "spec.agents[0].autoscaling.targetInFlightCalls",
            "greater than or equal to 1"),
        rule(
            "the store names a Secret",
            "fleet",
            "store: {secretName: Not_A_Name}\n  agents: [{name: a}]",
            "spec.store.secretName",
            "should match"),
        rule(
            "the store needs its Secret",
            "fleet",
            "store: {}\n  agents: [{name: a}]",
            "spec.store.secretName",
            "Required value"),
        rule(
            "auth has exactly one mode",
            "fleet",
            "auth: {openHealth: false}\n  agents: [{name: a}]",
            "spec.auth",
            "set exactly one of oidc and staticTokens"),
        rule(
            "auth has not both modes",
            "fleet",
            "auth: {oidc: {issuerUrl: 'https://k/realms/p'}, staticTokens: {secretName: t}}\n"
                + "  agents: [{name: a}]",
            "spec.auth",
            "set exactly one of oidc and staticTokens"),
        rule(
            "the issuer is a URL",
            "fleet",
            "auth: {oidc: {issuerUrl: 'keycloak/realms/p'}}\n  agents: [{name: a}]",
            "spec.auth.oidc.issuerUrl",
            "must be an http:// or https:// URL with a host"),
        rule(
            "a required scope is a scope",
            "fleet",
            "auth: {oidc: {issuerUrl: 'https://k/realms/p', requiredScopes: ['a b']}}\n"
                + "  agents: [{name: a}]",
            "spec.auth.oidc.requiredScopes[0]",
            "should match"),
        rule(
            "no token passthrough with OIDC unless allowed",
            "fleet",
            "auth: {oidc: {issuerUrl: 'https://k/realms/p'}}\n"
                + "  mcpServers: [{name: s, url: 'http://s:1/mcp', forwardInboundAuth: true}]\n"
                + "  agents: [{name: a, servers: [s]}]",
            "spec.mcpServers",
            "forwardInboundAuth would pass callers' tokens"),
        rule(
            "token exchange needs the agents' OIDC client",
            "fleet",
            "auth: {oidc: {issuerUrl: 'https://k/realms/p'}}\n"
                + "  mcpServers: [{name: s, url: 'http://s:1/mcp', tokenExchange: {audience: s}}]\n"
                + "  agents: [{name: a, servers: [s]}]",
            "spec.mcpServers",
            DeploymentValidator.EXCHANGE_NEEDS_CLIENT),
        rule(
            "token exchange names whom the token is for",
            "fleet",
            OIDC_WITH_CLIENT
                + "  mcpServers: [{name: s, url: 'http://s:1/mcp', tokenExchange: {scopes: [s]}}]\n"
                + "  agents: [{name: a, servers: [s]}]",
            "spec.mcpServers[0].tokenExchange",
            "set audience, resource or both"),
        rule(
            "token exchange or forwarding, not both",
            "fleet",
            OIDC_WITH_CLIENT.replace("client:", "allowForwarding: true, client:")
                + "  mcpServers: [{name: s, url: 'http://s:1/mcp', forwardInboundAuth: true,"
                + " tokenExchange: {audience: s}}]\n"
                + "  agents: [{name: a, servers: [s]}]",
            "spec.mcpServers[0]",
            "set at most one of tokenExchange and forwardInboundAuth"),
        rule(
            "token exchange and an Authorization header of its own",
            "fleet",
            OIDC_WITH_CLIENT
                + "  mcpServers: [{name: s, url: 'http://s:1/mcp', tokenExchange: {audience: s},"
                + " headers: [{name: authorization, value: x}]}]\n"
                + "  agents: [{name: a, servers: [s]}]",
            "spec.mcpServers[0]",
            "headers may not set one too"),
        rule(
            "the agents' client secret is never inline",
            "fleet",
            OIDC_WITH_CLIENT.replace("{env: SECRET}", "{value: hunter2}") + "  agents: [{name: a}]",
            "spec.auth.oidc.client.secret",
            DeploymentValidator.INLINE_CLIENT_SECRET),
        rule(
            "static tokens name a Secret",
            "fleet",
            "auth: {staticTokens: {secretName: Not_A_Name}}\n  agents: [{name: a}]",
            "spec.auth.staticTokens.secretName",
            "should match"),
        rule(
            "description length",
            "fleet",
            "agents: [{name: a, description: '" + "d".repeat(101) + "'}]",
            "spec.agents[0].description",
            "may not be more than 100"));
  }

  private static final String OIDC_WITH_CLIENT =
      "auth: {oidc: {issuerUrl: 'https://k/realms/p', client: {id: agents, secret: {env: SECRET}}}}\n";

  private static Arguments rule(String title, String name, String spec, String... expected) {
    String yaml =
        "apiVersion: pallas.helu.ca/v1alpha1\nkind: PallasDeployment\nmetadata: {name: "
            + name
            + "}\nspec:\n"
            + (title.equals("every agent has a model") ? "" : "  defaultModel: passthrough\n")
            + "  "
            + spec
            + "\n";
    return Arguments.of(title, yaml, expected);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("rules")
  void theApiServerRefusesAndSoDoesServe(String title, String yaml, String[] expected)
      throws JsonProcessingException {
    PallasDeployment d = ManifestParser.yamlMapper().readValue(yaml, PallasDeployment.class);
    d.getMetadata().setNamespace(namespace);
    assertThatThrownBy(() -> K8S.resource(d).create())
        .isInstanceOf(KubernetesClientException.class)
        .satisfies(e -> assertThat(((KubernetesClientException) e).getCode()).isEqualTo(422))
        .message()
        .contains(expected);
    assertThat(DeploymentValidator.validate(d)).as("serve -f refuses it too").isNotEmpty();
  }
}
