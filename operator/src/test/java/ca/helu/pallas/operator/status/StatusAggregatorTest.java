package ca.helu.pallas.operator.status;

import static org.assertj.core.api.Assertions.assertThat;

import ca.helu.pallas.api.ManifestParser;
import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.api.PallasDeploymentStatus;
import ca.helu.pallas.operator.render.StartGate;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class StatusAggregatorTest {
  private static final Instant T0 = Instant.parse("2026-11-22T10:00:00Z");
  private static final Instant T1 = Instant.parse("2026-11-22T10:05:00Z");

  static PallasDeployment deployment() {
    PallasDeployment d =
        ManifestParser.parse(
            """
            apiVersion: pallas.helu.ca/v1alpha1
            kind: PallasDeployment
            metadata: {name: f, namespace: ai}
            spec:
              registry: {port: 23030}
              defaultModel: passthrough
              agents: [{name: a, port: 23031}, {name: b, servers: [a], replicas: 2}]
            """,
            "t");
    d.getMetadata().setGeneration(3L);
    return d;
  }

  static Deployment ready(int replicas) {
    return new DeploymentBuilder()
        .withNewMetadata()
        .withGeneration(1L)
        .endMetadata()
        .withNewSpec()
        .withReplicas(replicas)
        .endSpec()
        .withNewStatus()
        .withObservedGeneration(1L)
        .withReplicas(replicas)
        .withUpdatedReplicas(replicas)
        .withReadyReplicas(replicas)
        .withAvailableReplicas(replicas)
        .endStatus()
        .build();
  }

  static Observation observation(
      Map<String, Deployment> agents, Deployment registry, StartGate gate) {
    return new Observation(
        List.of(), List.of(), null, agents, registry, gate, false, false, null, null);
  }

  static Condition condition(PallasDeploymentStatus s, String type) {
    return s.conditions().stream().filter(c -> c.getType().equals(type)).findFirst().orElseThrow();
  }

  /** The autoscaler's count is what the status shows; the agent is ready at its minimum. */
  @Test
  void anAutoscaledAgentIsReadyAtItsMinimumAndShowsTheAutoscalersCount() {
    PallasDeployment d =
        ManifestParser.parse(
            """
            apiVersion: pallas.helu.ca/v1alpha1
            kind: PallasDeployment
            metadata: {name: f, namespace: ai}
            spec:
              defaultModel: passthrough
              agents: [{name: a, autoscaling: {minReplicas: 2, maxReplicas: 6}}]
            """,
            "t");
    Deployment scalingUp = ready(2);
    scalingUp.getSpec().setReplicas(5);
    PallasDeploymentStatus s =
        StatusAggregator.aggregate(
            d,
            observation(Map.of("a", scalingUp), ready(1), new StartGate(Set.of("a"), Map.of())),
            T0);
    assertThat(s.agents().get(0).replicas()).isEqualTo(5);
    assertThat(s.agents().get(0).readyReplicas()).isEqualTo(2);
    assertThat(condition(s, "Ready").getStatus()).isEqualTo("True");
    assertThat(condition(s, "Progressing").getStatus()).as("scaling up").isEqualTo("True");
  }

  @Test
  void allReadyIsReadyConvergedAndNotDegraded() {
    PallasDeployment d = deployment();
    PallasDeploymentStatus s =
        StatusAggregator.aggregate(
            d,
            observation(
                Map.of("a", ready(1), "b", ready(2)),
                ready(1),
                new StartGate(Set.of("a", "b"), Map.of())),
            T0);
    assertThat(s.observedGeneration()).isEqualTo(3L);
    assertThat(condition(s, "Ready").getStatus()).isEqualTo("True");
    assertThat(condition(s, "Ready").getReason()).isEqualTo("AllAgentsReady");
    assertThat(condition(s, "Progressing").getReason()).isEqualTo("Converged");
    assertThat(condition(s, "Degraded").getStatus()).isEqualTo("False");
    assertThat(s.agentsReady()).isEqualTo("2/2");
    assertThat(s.registryUrl())
        .isEqualTo("http://f-registry.ai.svc:23030/.well-known/mcp/server.json");
    assertThat(s.agents())
        .extracting(PallasDeploymentStatus.AgentStatus::url)
        .containsExactly("http://f-a.ai.svc:23031/mcp", "http://f-b.ai.svc:23032/mcp");
  }

  @Test
  void waitingAgentsAreNamedWithWhatTheyWaitFor() {
    PallasDeploymentStatus s =
        StatusAggregator.aggregate(
            deployment(),
            observation(Map.of(), null, new StartGate(Set.of("a"), Map.of("b", List.of("a")))),
            T0);
    assertThat(condition(s, "Ready").getReason()).isEqualTo("WaitingForDependencies");
    assertThat(condition(s, "Progressing").getMessage()).isEqualTo("b waits for a");
    assertThat(s.agents().get(1).waitingFor()).containsExactly("a");
    assertThat(s.agentsReady()).isEqualTo("0/2");
  }

  @Test
  void invalidSpecAndMissingSecretsAreReportedOnAllThreeConditions() {
    PallasDeploymentStatus s =
        StatusAggregator.aggregate(
            deployment(),
            new Observation(
                List.of("spec.agents: dependency cycle a -> b -> a"),
                List.of(),
                null,
                Map.of(),
                null,
                null,
                false,
                false,
                null,
                null),
            T0);
    for (String type : List.of("Ready", "Progressing", "Degraded")) {
      assertThat(condition(s, type).getReason()).isEqualTo("InvalidSpec");
      assertThat(condition(s, type).getMessage()).contains("a -> b -> a");
    }
    s =
        StatusAggregator.aggregate(
            deployment(),
            new Observation(
                List.of(),
                List.of("spec.providers.openai.apiKey: Secret 'llm' does not exist"),
                null,
                Map.of(),
                null,
                null,
                false,
                false,
                null,
                null),
            T0);
    assertThat(condition(s, "Ready").getReason()).isEqualTo("SecretMissing");
    assertThat(condition(s, "Degraded").getStatus()).isEqualTo("True");
  }

  @Test
  void aSkippedServiceMonitorDegradesButDoesNotUnready() {
    PallasDeploymentStatus s =
        StatusAggregator.aggregate(
            deployment(),
            new Observation(
                List.of(),
                List.of(),
                null,
                Map.of("a", ready(1), "b", ready(2)),
                ready(1),
                new StartGate(Set.of("a", "b"), Map.of()),
                true,
                false,
                null,
                null),
            T0);
    assertThat(condition(s, "Ready").getStatus()).isEqualTo("True");
    assertThat(condition(s, "Degraded").getReason()).isEqualTo("ServiceMonitorSkipped");
  }

  @Test
  void aRolloutPastItsDeadlineIsAFailingAgent() {
    Deployment stuck = ready(1);
    stuck.getStatus().setReadyReplicas(0);
    stuck
        .getStatus()
        .setConditions(
            List.of(
                new io.fabric8.kubernetes.api.model.apps.DeploymentConditionBuilder()
                    .withType("Progressing")
                    .withStatus("False")
                    .withReason("ProgressDeadlineExceeded")
                    .withMessage("ReplicaSet \"f-a-1\" has timed out progressing.")
                    .build()));
    PallasDeploymentStatus s =
        StatusAggregator.aggregate(
            deployment(),
            observation(
                Map.of("a", stuck, "b", ready(2)),
                ready(1),
                new StartGate(Set.of("a", "b"), Map.of())),
            T0);
    assertThat(condition(s, "Degraded").getReason()).isEqualTo("AgentsFailing");
    assertThat(condition(s, "Degraded").getMessage()).startsWith("a: ProgressDeadlineExceeded");
    assertThat(condition(s, "Ready").getMessage()).isEqualTo("ready: a 0/1");
  }

  @Test
  void lastTransitionTimeMovesOnlyWhenTheStatusChangesAndTheSameObservationGivesAnEqualStatus() {
    PallasDeployment d = deployment();
    Observation notReady =
        observation(Map.of("a", ready(1)), ready(1), new StartGate(Set.of("a", "b"), Map.of()));
    PallasDeploymentStatus first = StatusAggregator.aggregate(d, notReady, T0);
    d.setStatus(first);
    assertThat(StatusAggregator.aggregate(d, notReady, T1)).isEqualTo(first);

    Observation allReady =
        observation(
            Map.of("a", ready(1), "b", ready(2)),
            ready(1),
            new StartGate(Set.of("a", "b"), Map.of()));
    PallasDeploymentStatus second = StatusAggregator.aggregate(d, allReady, T1);
    assertThat(condition(second, "Ready").getLastTransitionTime()).isEqualTo(T1.toString());
    assertThat(condition(second, "Degraded").getLastTransitionTime())
        .as("Degraded stayed False")
        .isEqualTo(T0.toString());
  }

  static Observation verified(Map<String, Verification> verifications) {
    return new Observation(
        List.of(),
        List.of(),
        null,
        Map.of("a", ready(1), "b", ready(2)),
        ready(1),
        new StartGate(Set.of("a", "b"), Map.of()),
        false,
        false,
        verifications,
        null);
  }

  /** Each agent's handshake is in its status; the fleet is Verified when every agent answered. */
  @Test
  void theFleetIsVerifiedWhenEveryAgentAnsweredTheHandshake() {
    Verification answered =
        Verification.verified("a", "1.0.0", "2025-11-25", List.of("send_message", "get_health"));
    PallasDeploymentStatus s =
        StatusAggregator.aggregate(
            deployment(), verified(Map.of("a", answered, "b", answered)), T0);
    Condition fleet = condition(s, "Verified");
    assertThat(fleet.getStatus()).isEqualTo("True");
    assertThat(fleet.getReason()).isEqualTo("AllAgentsVerified");
    PallasDeploymentStatus.AgentStatus a = s.agents().get(0);
    assertThat(a.conditions())
        .singleElement()
        .satisfies(c -> {
          assertThat(c.getType()).isEqualTo("Verified");
          assertThat(c.getStatus()).isEqualTo("True");
          assertThat(c.getReason()).isEqualTo("HandshakeSucceeded");
        });
    assertThat(a.serverInfo()).isEqualTo(new PallasDeploymentStatus.ServerInfo("a", "1.0.0"));
    assertThat(a.protocolVersion()).isEqualTo("2025-11-25");
    assertThat(a.tools()).containsExactly("send_message", "get_health");
    // the ready condition is about pods, and stays as it was
    assertThat(condition(s, "Ready").getReason()).isEqualTo("AllAgentsReady");
  }

  /**
   * An agent that did not answer makes the fleet False, naming it and why; one not yet asked,
   * Unknown.
   */
  @Test
  void anAgentThatDidNotAnswerIsNamedWithItsReason() {
    Verification answered = Verification.verified("a", "1", "2025-06-18", List.of("send_message"));
    Verification refused =
        Verification.failed(
            Reason.InitializeFailed, "initialize: unreachable (connection refused)");
    PallasDeploymentStatus s =
        StatusAggregator.aggregate(deployment(), verified(Map.of("a", answered, "b", refused)), T0);
    Condition fleet = condition(s, "Verified");
    assertThat(fleet.getStatus()).isEqualTo("False");
    assertThat(fleet.getReason()).isEqualTo("AgentsNotVerified");
    assertThat(fleet.getMessage()).isEqualTo("b: initialize: unreachable (connection refused)");
    assertThat(s.agents().get(1).conditions().get(0).getReason()).isEqualTo("InitializeFailed");
    assertThat(s.agents().get(1).tools()).isNull();

    s =
        StatusAggregator.aggregate(
            deployment(), verified(Map.of("a", answered, "b", Verification.pending())), T0);
    assertThat(condition(s, "Verified").getStatus()).isEqualTo("Unknown");
    assertThat(condition(s, "Verified").getReason()).isEqualTo("Verifying");
    assertThat(condition(s, "Verified").getMessage()).isEqualTo("not asked yet: b");
  }

  /** An agent's Verified keeps its transition time while it stays True: nothing is rewritten. */
  @Test
  void anAgentsVerifiedConditionKeepsItsTransitionTime() {
    Verification answered = Verification.verified("a", "1", "2025-06-18", List.of("send_message"));
    PallasDeployment d = deployment();
    d.setStatus(StatusAggregator.aggregate(d, verified(Map.of("a", answered, "b", answered)), T0));
    PallasDeploymentStatus later =
        StatusAggregator.aggregate(d, verified(Map.of("a", answered, "b", answered)), T1);
    assertThat(later).isEqualTo(d.getStatus());
    assertThat(later.agents().get(0).conditions().get(0).getLastTransitionTime())
        .isEqualTo(T0.toString());
  }

  /** With verification switched off, there is no Verified condition at all. */
  @Test
  void withoutVerificationThereIsNoVerifiedCondition() {
    PallasDeploymentStatus s = StatusAggregator.aggregate(deployment(), verified(null), T0);
    assertThat(s.conditions()).extracting(Condition::getType).doesNotContain("Verified");
    assertThat(s.agents().get(0).conditions()).isNull();
  }
}
