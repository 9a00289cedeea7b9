package ca.helu.pallas.operator.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.operator.status.Reason;
import ca.helu.pallas.operator.status.Verification;
import ca.helu.pallas.operator.testing.Fixtures;
import ca.helu.pallas.operator.verify.AgentVerifier;
import ca.helu.pallas.operator.verify.McpHandshake;
import ca.helu.pallas.runtime.testing.TestMcpServer;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The verifier asks again on its interval, without any change to the agent's pods: an agent whose
 * server stops answering (a hung pod the kubelet has not restarted yet) turns False, and True again
 * once it answers. A real MCP server on a free port, the real handshake.
 */
class AgentVerifierIT {

  @Test
  void anAgentIsAskedAgainEveryIntervalWithoutAPodChange() {
    TestMcpServer first = TestMcpServer.start();
    int port = first.port();
    AtomicReference<TestMcpServer> server = new AtomicReference<>(first);
    PallasDeployment fleet =
        Fixtures.parse("f", "ai", "  defaultModel: passthrough\n  agents: [{name: a, port: 1}]\n");
    Map<String, Deployment> pods = Map.of("a", ready(1));
    try (AgentVerifier verifier =
        new AgentVerifier(
            (f, agent) -> URI.create("http://127.0.0.1:" + port + "/mcp"),
            new McpHandshake(),
            null,
            Duration.ofSeconds(1),
            Clock.systemUTC())) {
      assertThat(verifier.observe(fleet, pods).get("a").reason()).isEqualTo(Reason.Pending);
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> verifier.observe(fleet, pods).get("a"), Verification::isTrue);

      server.get().kill();
      Verification gone =
          await()
              .atMost(Duration.ofSeconds(10))
              .until(() -> verifier.observe(fleet, pods).get("a"), Verification::isFalse);
      assertThat(gone.message()).isEqualTo("initialize: unreachable (connection refused)");

      server.set(TestMcpServer.start(TestMcpServer.Mode.MCP, port));
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> verifier.observe(fleet, pods).get("a"), Verification::isTrue);

      // no ready pod: nothing to ask
      Deployment none = ready(1);
      none.getStatus().setReadyReplicas(0);
      assertThat(verifier.observe(fleet, Map.of("a", none)).get("a").reason())
          .isEqualTo(Reason.NoReadyPod);
    } finally {
      server.get().close();
    }
  }

  /**
   * A fleet deleted and created again under its name is asked at once, not taken for the old one,
   * long before the interval: its new Deployment is another object, whatever its counts.
   */
  @Test
  void aRecreatedDeploymentIsAskedAtOnce() {
    TestMcpServer server = TestMcpServer.start();
    URI url = URI.create(server.url());
    PallasDeployment fleet =
        Fixtures.parse("f", "ai", "  defaultModel: passthrough\n  agents: [{name: a, port: 1}]\n");
    Deployment old = ready(1);
    old.getMetadata().setUid("old");
    try (AgentVerifier verifier =
        new AgentVerifier(
            (f, agent) -> url,
            new McpHandshake(),
            null,
            Duration.ofMinutes(10),
            Clock.systemUTC())) {
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> verifier.observe(fleet, Map.of("a", old)).get("a"), Verification::isTrue);
      server.kill();
      Deployment recreated = ready(1);
      recreated.getMetadata().setUid("new");
      Verification v =
          await()
              .atMost(Duration.ofSeconds(10))
              .until(
                  () -> verifier.observe(fleet, Map.of("a", recreated)).get("a"),
                  Verification::isFalse);
      assertThat(v.message()).isEqualTo("initialize: unreachable (connection refused)");
    } finally {
      server.close();
    }
  }

  /** An agent's Deployment as the Deployment controller reports it with every pod ready. */
  private static Deployment ready(int replicas) {
    return new DeploymentBuilder()
        .withNewMetadata()
        .withGeneration(1L)
        .endMetadata()
        .withNewStatus()
        .withObservedGeneration(1L)
        .withReplicas(replicas)
        .withUpdatedReplicas(replicas)
        .withReadyReplicas(replicas)
        .withAvailableReplicas(replicas)
        .endStatus()
        .build();
  }
}
