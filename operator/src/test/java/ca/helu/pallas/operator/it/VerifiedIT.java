package ca.helu.pallas.operator.it;

import static ca.helu.pallas.operator.testing.Fixtures.awaitAndMarkAvailable;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.api.PallasDeploymentStatus.AgentStatus;
import ca.helu.pallas.api.PallasDeploymentStatus.ServerInfo;
import ca.helu.pallas.api.PallasNames;
import ca.helu.pallas.operator.OperatorConfig;
import ca.helu.pallas.operator.PallasOperator;
import ca.helu.pallas.operator.testing.Fixtures;
import ca.helu.pallas.operator.testing.KubeCluster;
import ca.helu.pallas.operator.testing.LocalPod;
import ca.helu.pallas.operator.testing.TestOperator;
import ca.helu.pallas.runtime.testing.HttpStatus;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Verified condition from a real MCP handshake: the operator (in this JVM, against a real API
 * server) asks each agent of a fleet whose rendered pods run as local processes of the runtime jar.
 * kube-api-test has no kubelet or Service network, so the operator reaches an agent at 127.0.0.1 on
 * its port instead of its Service's name (the one seam, AgentEndpoints); everything else is as in a
 * cluster. Its interval is 10 minutes, so every handshake seen here follows a change of the agent's
 * pods, as the Deployment controller reports them.
 */
class VerifiedIT {
  private static final KubernetesClient K8S = KubeCluster.shared().client();
  private static final String SELECTED = "verified";
  private static final List<LocalPod> PODS = new ArrayList<>();
  private static PallasOperator operator;

  @BeforeAll
  static void start() throws Exception {
    Map<String, String> env = new HashMap<>();
    env.put("PALLAS_RUNTIME_IMAGE", TestOperator.IMAGE);
    env.put("PALLAS_HTTP_PORT", "0");
    env.put("PALLAS_RESOURCE_SELECTOR", TestOperator.OTHER_OPERATOR + "=" + SELECTED);
    env.put("PALLAS_VERIFY_INTERVAL_SECONDS", "600");
    operator =
        new PallasOperator(
                K8S,
                OperatorConfig.fromEnvironment(env),
                (fleet, agent) ->
                    URI.create("http://127.0.0.1:" + fleet.getSpec().portOf(agent) + "/mcp"))
            .start();
  }

  @AfterAll
  static void stop() {
    PODS.forEach(LocalPod::close);
    if (operator != null) {
      operator.close();
    }
  }

  @Test
  void eachAgentsHandshakeIsInTheStatusAndTheFleetIsVerifiedWhenAllAnswer(@TempDir Path dir)
      throws Exception {
    String ns = KubeCluster.shared().namespace("verified");
    int[] ports = LocalPod.freePorts(3);
    PallasDeployment parsed =
        Fixtures.parse(
            "checked",
            ns,
            """
              version: "2.3.4"
              registry: {port: %d}
              defaultModel: passthrough
              agents:
                - {name: helper, port: %d}
                - {name: other, port: %d}
            """
                .formatted(ports[0], ports[1], ports[2]));
    parsed.getMetadata().setLabels(Map.of(TestOperator.OTHER_OPERATOR, SELECTED));
    PallasDeployment d = K8S.resource(parsed).create();
    Path hosts = dir.resolve("hosts");
    Files.writeString(hosts, "127.0.0.1 localhost\n");

    // the helper's pod runs and is ready; the other's Deployment says so too, but nothing listens
    Deployment helper =
        KubeCluster.shared().awaitDeployment(ns, PallasNames.agentObject("checked", "helper"));
    PODS.add(LocalPod.start(K8S, helper, dir.resolve("helper"), hosts, null));
    awaitReady(ports[1]);
    KubeCluster.shared().markAvailable(helper);
    awaitAndMarkAvailable(d, "other");

    // (until the other's Deployment is marked, the message says it has no ready pod)
    Condition notVerified =
        awaitVerified(
            d, "AgentsNotVerified", "other: initialize: unreachable (connection refused)");
    assertThat(notVerified.getStatus()).isEqualTo("False");
    AgentStatus helperStatus = agent(d, "helper");
    assertThat(helperStatus.conditions())
        .singleElement()
        .satisfies(c -> {
          assertThat(c.getType()).isEqualTo("Verified");
          assertThat(c.getStatus()).isEqualTo("True");
          assertThat(c.getReason()).isEqualTo("HandshakeSucceeded");
        });
    assertThat(helperStatus.serverInfo()).isEqualTo(new ServerInfo("helper", "2.3.4"));
    assertThat(helperStatus.protocolVersion()).isIn("2025-06-18", "2025-11-25");
    assertThat(helperStatus.tools()).contains("send_message", "get_health");
    assertThat(agent(d, "other").conditions().get(0).getReason()).isEqualTo("InitializeFailed");
    // the pods are ready: Ready is about them, not about the handshake
    assertThat(Fixtures.condition(d, "Ready").orElseThrow().getReason())
        .isNotEqualTo("AllAgentsVerified");

    // a rollout of the other agent: its old pod goes, a new one starts and becomes ready
    Deployment other = Fixtures.agentDeployment(d, "other");
    other.getStatus().setReadyReplicas(0);
    other.getStatus().setAvailableReplicas(0);
    K8S.resource(other).updateStatus();
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> agent(d, "other").conditions().get(0).getReason(), "NoReadyPod"::equals);
    PODS.add(LocalPod.start(K8S, other, dir.resolve("other"), hosts, null));
    awaitReady(ports[2]);
    long ready = System.nanoTime();
    KubeCluster.shared().markAvailable(other);

    Condition verified =
        awaitVerified(
            d, "AllAgentsVerified", "every agent answered initialize and tools/list (2 of 2)");
    System.out.printf(
        "Verified=True %d ms after the new pod was reported ready%n",
        (System.nanoTime() - ready) / 1_000_000);
    assertThat(verified.getStatus()).isEqualTo("True");
    assertThat(agent(d, "other").serverInfo()).isEqualTo(new ServerInfo("other", "2.3.4"));

    // kubectl shows it with -o wide, and keeps the short listing as it was
    List<String> wide =
        KubeCluster.shared().kubectl("get", "pallas", "-n", ns, "-o", "wide").lines().toList();
    assertThat(wide.get(0).split("\\s+"))
        .containsExactly("NAME", "READY", "AGENTS", "REGISTRY", "URL", "VERIFIED", "AGE");
    assertThat(wide.get(1).split("\\s+")[4]).isEqualTo("True");
    List<String> narrow = KubeCluster.shared().kubectl("get", "pallas", "-n", ns).lines().toList();
    assertThat(narrow.get(0)).doesNotContain("VERIFIED");
  }

  private static void awaitReady(int port) {
    await()
        .atMost(Duration.ofSeconds(90))
        .until(() -> HttpStatus.of("http://127.0.0.1:" + port + "/readyz") == 200);
  }

  private static Condition awaitVerified(PallasDeployment d, String reason, String message) {
    return await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () -> Fixtures.condition(d, "Verified"),
            c ->
                c.isPresent()
                    && reason.equals(c.get().getReason())
                    && message.equals(c.get().getMessage()))
        .orElseThrow();
  }

  private static AgentStatus agent(PallasDeployment d, String name) {
    return Fixtures.get(d).getStatus().agents().stream()
        .filter(a -> name.equals(a.name()))
        .findFirst()
        .orElseThrow();
  }
}
