package ca.helu.pallas.operator.it;

import static ca.helu.pallas.operator.testing.Fixtures.agentDeployment;
import static ca.helu.pallas.operator.testing.Fixtures.awaitAndMarkAvailable;
import static ca.helu.pallas.operator.testing.Fixtures.awaitCondition;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.api.PallasDeploymentStatus.AgentStatus;
import ca.helu.pallas.operator.testing.Fixtures;
import ca.helu.pallas.operator.testing.KubeCluster;
import ca.helu.pallas.operator.testing.TestOperator;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentConditionBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * An agent named in another's dependsOn or servers is available before the other's pods start (no
 * kubelet here: the test writes the Deployment status a controller would), and the status names who
 * waits for whom. A running agent is not stopped when a dependency later restarts.
 */
class StartOrderIT {
  private static final KubernetesClient K8S = KubeCluster.shared().client();

  @Test
  void dependantsStartOnlyOnceTheirDependenciesAreAvailable() {
    TestOperator.shared();
    String ns = KubeCluster.shared().namespace("order");
    PallasDeployment d =
        Fixtures.create(
            "fleet",
            ns,
            """
              defaultModel: passthrough
              agents:
                - {name: front, servers: [middle]}
                - {name: middle, dependsOn: [back]}
                - {name: back}
            """);
    awaitAndMarkAvailable(d, "back");
    // the status written before back became available also says WaitingForDependencies (with
    // "middle waits for back"): wait for the one written after it
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(() ->
            assertThat(Fixtures.condition(d, "Progressing"))
                .hasValueSatisfying(progressing -> {
                  assertThat(progressing.getReason()).isEqualTo("WaitingForDependencies");
                  assertThat(progressing.getMessage()).isEqualTo("front waits for middle");
                }));
    assertThat(agentDeployment(d, "front")).isNull();
    assertThat(agentStatus(d, "front").waitingFor()).containsExactly("middle");
    assertThat(Fixtures.condition(d, "Ready").orElseThrow().getReason())
        .isEqualTo("WaitingForDependencies");

    Deployment middle = awaitAndMarkAvailable(d, "middle");
    awaitAndMarkAvailable(d, "front");
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(() -> assertThat(agentStatus(d, "front").waitingFor()).isNull());

    // middle restarts: front keeps running
    Deployment now = K8S.resource(middle).get();
    now.getStatus()
        .setConditions(
            List.of(
                new DeploymentConditionBuilder()
                    .withType("Available")
                    .withStatus("False")
                    .withReason("MinimumReplicasUnavailable")
                    .build()));
    now.getStatus().setReadyReplicas(0);
    now.getStatus().setAvailableReplicas(0);
    K8S.resource(now).updateStatus();
    awaitCondition(d, "Ready", "AgentsNotReady");
    await()
        .during(Duration.ofSeconds(2))
        .atMost(Duration.ofSeconds(5))
        .until(() -> agentDeployment(d, "front") != null);
  }

  /**
   * A pod group starts once the agents its agents need in other pods are available; its agents do
   * not wait for each other, their process starts them in order (docs/operator.md, "Agents sharing
   * a pod").
   */
  @Test
  void aPodGroupWaitsForTheAgentsItsAgentsNeedElsewhere() {
    TestOperator.shared();
    String ns = KubeCluster.shared().namespace("order-group");
    PallasDeployment d =
        Fixtures.create(
            "fleet",
            ns,
            """
              defaultModel: passthrough
              podGroups: [{name: g}]
              agents:
                - {name: front, podGroup: g, servers: [middle]}
                - {name: middle, podGroup: g, dependsOn: [back]}
                - {name: back}
            """);
    assertThat(awaitCondition(d, "Progressing", "WaitingForDependencies").getMessage())
        .isEqualTo("front waits for back; middle waits for back");
    assertThat(agentDeployment(d, "g")).isNull();
    awaitAndMarkAvailable(d, "back");
    Deployment g = awaitAndMarkAvailable(d, "g");
    assertThat(g.getSpec().getTemplate().getSpec().getContainers().get(0).getArgs())
        .containsSequence("--agent", "front", "--agent", "middle");
    Fixtures.awaitRegistryAndMarkAvailable(d);
    awaitCondition(d, "Ready", "AllAgentsReady");
    assertThat(Fixtures.get(d).getStatus().agentsReady()).isEqualTo("3/3");
  }

  private static AgentStatus agentStatus(PallasDeployment d, String agent) {
    return await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                Fixtures.get(d).getStatus().agents().stream()
                    .filter(a -> a.name().equals(agent))
                    .findFirst()
                    .orElseThrow(),
            a -> true);
  }
}
