package ca.helu.pallas.runtime.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.api.AgentSpec;
import ca.helu.pallas.api.ManifestParser;
import ca.helu.pallas.api.PallasDeploymentSpec;
import ca.helu.pallas.api.SecretValue;
import ca.helu.pallas.api.SecretVariables;
import ca.helu.pallas.runtime.auth.StaticTokens;
import ca.helu.pallas.runtime.config.Environment;
import ca.helu.pallas.runtime.config.Secrets;
import ca.helu.pallas.runtime.downstream.Credentials;
import ca.helu.pallas.runtime.downstream.McpToolServers;
import ca.helu.pallas.runtime.metrics.PallasMetrics;
import ca.helu.pallas.runtime.registry.RegistryServer;
import ca.helu.pallas.runtime.testing.McpClients;
import ca.helu.pallas.runtime.testing.RunningFleet;
import ca.helu.pallas.runtime.testing.TestMcpServer;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The registry's MCP endpoint follows the fleet (issue 20 §1): agents removed from the manifest
 * leave its index and resources, added ones join; it asks for the fleet's tokens, passing the
 * caller's on, and sends a server's headers from their Secret (docs/runtime.md, "The registry's MCP
 * endpoint").
 */
class RegistryFollowsIT {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** A registry as the `registry` command runs it: its own process part, beside the agents. */
  private static RegistryServer registry(RunningFleet fleet, PallasDeploymentSpec spec) {
    return registry(fleet, spec, Map.of());
  }

  /** The same, its secrets read from the environment {@code env}, as the pod's. */
  private static RegistryServer registry(
      RunningFleet fleet, PallasDeploymentSpec spec, Map<String, String> env) {
    return new RegistryServer(
            new RegistryServer.Options(
                "127.0.0.1",
                RunningFleet.freePort(),
                a -> fleet.mcpUrl(a.name()),
                a -> fleet.mcpUrl(a.name()),
                "http://127.0.0.1/mcp",
                null,
                new McpToolServers(new Secrets(new Environment(env)), Duration.ofMinutes(1)),
                List.of(),
                Duration.ofSeconds(3),
                Duration.ofMillis(500),
                agent -> Credentials.NONE),
            spec,
            new PallasMetrics())
        .start();
  }

  private static List<String> hits(McpSyncClient client, String query) {
    McpSchema.CallToolResult result =
        client.callTool(new McpSchema.CallToolRequest("find_tools", Map.of("query", query)));
    JsonNode found = JSON.valueToTree(result.structuredContent());
    List<String> names = new ArrayList<>();
    found.at("/results/0/hits").forEach(h -> names.add(h.get("name").asText()));
    return names;
  }

  @Test
  void agentsRemovedFromTheManifestLeaveTheIndexAndAddedOnesJoin() {
    try (RunningFleet fleet =
        RunningFleet.start(
            """
            apiVersion: pallas.helu.ca/v1alpha1
            kind: PallasDeployment
            metadata: {name: follows}
            spec:
              registry: {port: ${port:registry}}
              defaultModel: passthrough
              agents:
                - {name: hotels, port: ${port:hotels}, description: Books hotel rooms}
                - {name: invoices, port: ${port:invoices}, description: Reads invoices}
            """)) {
      PallasDeploymentSpec both = fleet.deployment().getSpec();
      PallasDeploymentSpec hotelsOnly =
          ManifestParser.parse(withoutInvoices(fleet), "changed manifest").getSpec();
      try (RegistryServer registry = registry(fleet, both);
          McpSyncClient client =
              McpClients.connect("http://127.0.0.1:" + registry.port() + "/mcp")) {
        assertThat(hits(client, "read an invoice")).contains("invoices/send_message");
        assertThat(uris(client)).contains("pallas://agents/invoices/health");

        registry.update(hotelsOnly);
        await()
            .atMost(Duration.ofSeconds(5))
            .untilAsserted(() -> {
              assertThat(hits(client, "read an invoice")).noneMatch(n -> n.startsWith("invoices/"));
              assertThat(uris(client)).containsExactly("pallas://agents/hotels/health");
            });

        registry.update(both);
        await()
            .atMost(Duration.ofSeconds(5))
            .untilAsserted(() -> {
              assertThat(hits(client, "read an invoice")).contains("invoices/send_message");
              assertThat(uris(client))
                  .containsExactly(
                      "pallas://agents/hotels/health", "pallas://agents/invoices/health");
            });
      }
    }
  }

  private static String withoutInvoices(RunningFleet fleet) {
    PallasDeploymentSpec spec = fleet.deployment().getSpec();
    AgentSpec hotels = spec.agent("hotels").orElseThrow();
    return """
    apiVersion: pallas.helu.ca/v1alpha1
    kind: PallasDeployment
    metadata: {name: follows}
    spec:
      registry: {port: %d}
      defaultModel: passthrough
      agents:
        - {name: hotels, port: %d, description: Books hotel rooms}
    """
        .formatted(spec.effectiveRegistry().effectivePort(), spec.portOf(hotels));
  }

  private static List<String> uris(McpSyncClient client) {
    return client.listResources().resources().stream().map(McpSchema.Resource::uri).toList();
  }

  @Test
  void withStaticTokensWhatTellsIsOpenAndCallToolCarriesTheCallersToken() throws Exception {
    try (TestMcpServer tools = TestMcpServer.start();
        RunningFleet fleet =
            RunningFleet.start(
                """
                apiVersion: pallas.helu.ca/v1alpha1
                kind: PallasDeployment
                metadata: {name: secured}
                spec:
                  registry: {port: ${port:registry}}
                  defaultModel: passthrough
                  mcpServers: [{name: tools, url: "%s", forwardInboundAuth: true}]
                  agents:
                    - {name: guarded, port: ${port:guarded}, servers: [tools]}
                  auth:
                    staticTokens: {secretName: tokens}
                """
                    .formatted(tools.url()),
                o -> o.withStaticTokens(new StaticTokens(Map.of("daedalus", "tok-daedalus"))))) {
      String mcp = fleet.registryBase() + "/mcp";
      try (McpSyncClient anonymous = McpClients.connect(mcp)) {
        // the registry's links read the agents without a token (openHealth)
        assertThat(hits(anonymous, "echo text")).contains("tools/echo");
        assertThatThrownBy(() ->
                anonymous.callTool(
                    new McpSchema.CallToolRequest("call_tool", Map.of("name", "tools/whoami"))))
            // 401: the SDK's client reports it as an authorization error
            .hasStackTraceContaining("McpHttpClientTransportAuthorizationException");
      }
      try (McpSyncClient daedalus = McpClients.connect(mcp, "tok-daedalus", n -> {})) {
        McpSchema.CallToolResult whoami =
            daedalus.callTool(
                new McpSchema.CallToolRequest("call_tool", Map.of("name", "tools/whoami")));
        assertThat(McpClients.text(whoami)).isEqualTo("Bearer tok-daedalus");
        McpSchema.CallToolResult turn =
            daedalus.callTool(
                new McpSchema.CallToolRequest(
                    "call_tool",
                    Map.of(
                        "name",
                        "guarded/send_message",
                        "arguments",
                        Map.of("message", "***FIXED_RESPONSE for daedalus"))));
        assertThat(turn.isError()).as(McpClients.text(turn)).isFalse();
        assertThat(McpClients.text(turn)).isEqualTo("for daedalus");
      }
      try (McpSyncClient wrong = McpClients.connect(mcp, "not-a-token", n -> {})) {
        throw new AssertionError("a wrong token was accepted at initialize");
      } catch (RuntimeException e) {
        assertThat(e).hasStackTraceContaining("McpHttpClientTransportAuthorizationException");
      }
    }
  }

  /**
   * With nothing open (openHealth: false), the registry follows the agents as itself: the key it
   * holds in this process, which every agent knows as an observer's (docs/runtime.md, "Agents
   * calling agents"), so its index is built and its health resources read as with openHealth.
   */
  @Test
  void withOpenHealthFalseTheRegistryFollowsTheAgentsAsItself() throws Exception {
    try (TestMcpServer tools = TestMcpServer.start();
        RunningFleet fleet =
            RunningFleet.start(
                """
                apiVersion: pallas.helu.ca/v1alpha1
                kind: PallasDeployment
                metadata: {name: closed}
                spec:
                  registry: {port: ${port:registry}}
                  defaultModel: passthrough
                  mcpServers: [{name: tools, url: "%s"}]
                  agents:
                    - {name: guarded, port: ${port:guarded}, servers: [tools]}
                  auth:
                    staticTokens: {secretName: tokens}
                    openHealth: false
                """
                    .formatted(tools.url()),
                o -> o.withStaticTokens(new StaticTokens(Map.of("daedalus", "tok-daedalus"))));
        McpSyncClient daedalus =
            McpClients.connect(fleet.registryBase() + "/mcp", "tok-daedalus", n -> {})) {
      assertThat(hits(daedalus, "echo text")).contains("tools/echo");
      String health = McpClients.resourceText(daedalus, "pallas://agents/guarded/health");
      assertThat(JSON.readTree(health).path("status").asText()).as(health).isEqualTo("ok");
    }
  }

  /**
   * A server whose header comes from a Secret (docs/runtime.md, "The registry's MCP endpoint"):
   * call_tool sends it as the agents do, read from the variable the operator fills from the Secret
   * key (SecretVariables); a registry whose environment lacks it is refused by the server, and its
   * call_tool says so without the value.
   */
  @Test
  void callToolSendsAServersHeaderFromItsSecret() throws Exception {
    String key = "vault-key-7f3a";
    Map<String, String> env =
        Map.of(
            SecretVariables.nameFor(new SecretValue.SecretKeyRef("vault", "api-key")),
            "Bearer " + key);
    try (TestMcpServer vault = TestMcpServer.requiring("Authorization", "Bearer " + key);
        RunningFleet fleet =
            RunningFleet.start(
                """
                apiVersion: pallas.helu.ca/v1alpha1
                kind: PallasDeployment
                metadata: {name: vaulted}
                spec:
                  registry: {port: ${port:registry}}
                  defaultModel: passthrough
                  mcpServers:
                    - name: vault
                      url: "%s"
                      headers:
                        - {name: Authorization, valueFrom: {secretKeyRef: {name: vault, key: api-key}}}
                  agents: [{name: keeper, port: ${port:keeper}, servers: [vault]}]
                """
                    .formatted(vault.url()),
                env)) {
      PallasDeploymentSpec spec = fleet.deployment().getSpec();
      try (RegistryServer registry = registry(fleet, spec, env);
          McpSyncClient client =
              McpClients.connect("http://127.0.0.1:" + registry.port() + "/mcp")) {
        assertThat(hits(client, "echo text")).contains("vault/echo");
        McpSchema.CallToolResult whoami =
            client.callTool(
                new McpSchema.CallToolRequest("call_tool", Map.of("name", "vault/whoami")));
        assertThat(whoami.isError()).as(McpClients.text(whoami)).isFalse();
        assertThat(McpClients.text(whoami)).isEqualTo("Bearer " + key);
      }
      try (RegistryServer without = registry(fleet, spec);
          McpSyncClient client =
              McpClients.connect("http://127.0.0.1:" + without.port() + "/mcp")) {
        assertThat(hits(client, "echo text")).contains("vault/echo");
        McpSchema.CallToolResult refused =
            client.callTool(
                new McpSchema.CallToolRequest("call_tool", Map.of("name", "vault/whoami")));
        assertThat(refused.isError()).isTrue();
        assertThat(McpClients.text(refused))
            .isEqualTo("vault/whoami got no answer: cannot connect: answered HTTP 401");
      }
    }
  }
}
