package ca.helu.pallas.operator.it;

import static ca.helu.pallas.operator.testing.Fixtures.awaitAndMarkAvailable;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.api.PallasDeploymentStatus.AgentStatus;
import ca.helu.pallas.api.PallasNames;
import ca.helu.pallas.operator.testing.Fixtures;
import ca.helu.pallas.operator.testing.KubeCluster;
import ca.helu.pallas.operator.testing.LocalPod;
import ca.helu.pallas.operator.testing.TestOperator;
import ca.helu.pallas.runtime.testing.HttpStatus;
import ca.helu.pallas.runtime.testing.TestMcpServer;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.spec.McpSchema;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The rendered pods really boot: the agent and registry Deployments the operator wrote, with their
 * ConfigMap and Secrets, run as local processes of the runtime jar with exactly those arguments,
 * environment and files (paths under a temp dir, Service names resolved to 127.0.0.1 by a hosts
 * file), the registry under its own ServiceAccount's token. Agents answer /readyz and get_health,
 * the registry lists every agent at the URL the status reports, calls a server with its header from
 * a Secret, and follows a spec change.
 */
class RenderedPodsIT {
  private static final KubernetesClient K8S = KubeCluster.shared().client();
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient HTTP = HttpClient.newHttpClient();
  private static final List<LocalPod> PODS = new ArrayList<>();

  private static TestMcpServer vault;

  @AfterAll
  static void stop() {
    PODS.forEach(LocalPod::close);
    if (vault != null) {
      vault.close();
    }
  }

  @Test
  void renderedPodsBootAndTheRegistryFollowsTheSpec(@TempDir Path dir) throws Exception {
    TestOperator.shared();
    String ns = KubeCluster.shared().namespace("boot");
    int[] ports = LocalPod.freePorts(3);
    String vaultToken = "Bearer tok-vault-91c4";
    vault = TestMcpServer.requiring("Authorization", vaultToken);
    Fixtures.secret(ns, "vault", Map.of("token", vaultToken));
    String spec =
        """
          registry: {port: %d, namespace: ca.helu.boot}
          defaultModel: passthrough
          providers: {anthropic: {apiKey: {value: inline-key}}}
          mcpServers:
            - name: vault
              url: "%s"
              headers: [{name: Authorization, valueFrom: {secretKeyRef: {name: vault, key: token}}}]
          agents:
            - {name: helper, port: %d, description: Echoes, servers: [vault]}
            - {name: coordinator, port: %d, servers: [helper], instanceScope: connection}
        """
            .formatted(ports[0], vault.url(), ports[1], ports[2]);
    PallasDeployment d = Fixtures.create("boot", ns, spec);
    awaitAndMarkAvailable(d, "helper");
    awaitAndMarkAvailable(d, "coordinator");
    Deployment registry = Fixtures.awaitRegistryAndMarkAvailable(d);

    Path hosts = dir.resolve("hosts");
    Files.writeString(
        hosts,
        "127.0.0.1 "
            + PallasNames.agentServiceHost("boot", ns, "helper")
            + " "
            + PallasNames.agentServiceHost("boot", ns, "coordinator")
            + "\n");
    for (String agent : List.of("helper", "coordinator")) {
      PODS.add(
          LocalPod.start(K8S, Fixtures.agentDeployment(d, agent), dir.resolve(agent), hosts, null));
    }
    PODS.add(
        LocalPod.start(
            K8S,
            registry,
            dir.resolve("registry"),
            hosts,
            LocalPod.serviceAccountKubeconfig(K8S, ns, PallasNames.registryObject("boot"))));
    for (int port : ports) {
      await()
          .atMost(Duration.ofSeconds(90))
          .until(() -> HttpStatus.of("http://127.0.0.1:" + port + "/readyz") == 200);
    }
    // the kubelet probes an agent on its probe port, apart from MCP (docs/runtime.md, "Limits")
    for (LocalPod agent : PODS.subList(0, 2)) {
      assertThat(HttpStatus.of("http://127.0.0.1:" + agent.probePort() + "/readyz")).isEqualTo(200);
      assertThat(HttpStatus.of("http://127.0.0.1:" + agent.probePort() + "/livez")).isEqualTo(200);
    }

    // the coordinator reaches the helper by its Service name, as in the cluster
    try (McpSyncClient client = mcp("http://127.0.0.1:" + ports[2] + "/mcp")) {
      // health is probed in the background: the helper may have come up after the first probe
      JsonNode report =
          await()
              .atMost(Duration.ofSeconds(30))
              .until(() -> health(client), r -> "ok".equals(r.get("status").asText()));
      assertThat(report.has("message")).as(report.toString()).isFalse();
      McpSchema.CallToolResult reply =
          client.callTool(
              new McpSchema.CallToolRequest(
                  "send_message",
                  Map.of("message", "***CALL_TOOL helper__helper {\"message\": \"hi\"}")));
      assertThat(((McpSchema.TextContent) reply.content().get(0)).text()).contains("hi");
    }

    // the registry publishes every agent at the URL the status reports
    String serverJson = "http://127.0.0.1:" + ports[0] + "/.well-known/mcp/server.json";
    List<AgentStatus> agents =
        await()
            .atMost(Duration.ofSeconds(30))
            .until(() -> Fixtures.get(d).getStatus().agents(), a -> a != null && a.size() == 2);
    JsonNode servers = JSON.readTree(get(serverJson)).get("servers");
    assertThat(servers).hasSize(2);
    for (AgentStatus agent : agents) {
      assertThat(servers.findValuesAsText("url")).contains(agent.url());
      assertThat(agent.url())
          .isEqualTo(
              "http://"
                  + PallasNames.agentServiceHost("boot", ns, agent.name())
                  + ":"
                  + (agent.name().equals("helper") ? ports[1] : ports[2])
                  + "/mcp");
    }

    // the registry's call_tool sends a server's header from its Secret, which the operator gave
    // its pod by reference as it gave the helper's (docs/operator.md, "The registry follows the
    // spec in well under a second")
    try (McpSyncClient client = mcp("http://127.0.0.1:" + ports[0] + "/mcp")) {
      McpSchema.CallToolResult whoami =
          await()
              .atMost(Duration.ofSeconds(30))
              .until(
                  () ->
                      client.callTool(
                          new McpSchema.CallToolRequest(
                              "call_tool", Map.of("name", "vault/whoami"))),
                  r -> !Boolean.TRUE.equals(r.isError()));
      assertThat(((McpSchema.TextContent) whoami.content().get(0)).text()).isEqualTo(vaultToken);
    }
    assertThat(registry.getSpec().getTemplate().getSpec().getContainers().get(0).getEnv())
        .anySatisfy(
            e -> assertThat(e.getValueFrom().getSecretKeyRef().getName()).isEqualTo("vault"));
    assertThat(K8S.apps().deployments().inNamespace(ns).list().getItems().toString())
        .doesNotContain("tok-vault-91c4");
    assertThat(K8S.configMaps().inNamespace(ns).list().getItems().toString())
        .doesNotContain("tok-vault-91c4");

    // a spec change reaches server.json within 5 s, without a restart
    long changed = System.nanoTime();
    Fixtures.replaceSpec(d, spec.replace("description: Echoes", "description: Echoes again"));
    await()
        .atMost(Duration.ofSeconds(5))
        .pollInterval(Duration.ofMillis(50))
        .until(() -> get(serverJson).contains("Echoes again"));
    System.out.printf(
        "registry followed a spec change in %d ms%n", (System.nanoTime() - changed) / 1_000_000);
    assertThat(PODS.get(2).isAlive()).isTrue();
  }

  private static JsonNode health(McpSyncClient client) throws Exception {
    McpSchema.CallToolResult health =
        client.callTool(new McpSchema.CallToolRequest("get_health", Map.of()));
    return JSON.readTree(((McpSchema.TextContent) health.content().get(0)).text());
  }

  private static McpSyncClient mcp(String url) {
    int slash = url.indexOf('/', "http://".length());
    McpSyncClient client =
        McpClient.sync(
                HttpClientStreamableHttpTransport.builder(url.substring(0, slash))
                    .endpoint(url.substring(slash))
                    .build())
            .requestTimeout(Duration.ofSeconds(30))
            .build();
    client.initialize();
    return client;
  }

  private static String get(String url) throws Exception {
    return HTTP.send(
            HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString())
        .body();
  }
}
