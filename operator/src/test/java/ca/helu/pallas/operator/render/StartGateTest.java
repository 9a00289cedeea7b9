package ca.helu.pallas.operator.render;

import static org.assertj.core.api.Assertions.assertThat;

import ca.helu.pallas.api.ManifestParser;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class StartGateTest {
  private static final RenderedFleet FLEET =
      FleetRenderer.render(
          ManifestParser.parse(
              """
              apiVersion: pallas.helu.ca/v1alpha1
              kind: PallasDeployment
              metadata: {name: f, namespace: n}
              spec:
                defaultModel: passthrough
                agents: [{name: front, servers: [back]}, {name: back}, {name: side, dependsOn: [back, front]}]
              """,
              "t"),
          SecretDigests.NONE);

  static Deployment deployment(boolean available, int replicas, int ready) {
    return new DeploymentBuilder()
        .withNewSpec()
        .withReplicas(replicas)
        .endSpec()
        .withNewStatus()
        .withReadyReplicas(ready)
        .addNewCondition()
        .withType("Available")
        .withStatus(available ? "True" : "False")
        .endCondition()
        .endStatus()
        .build();
  }

  @Test
  void agentsWaitForTheirUnavailableDependencies() {
    StartGate gate = StartGate.of(FLEET, Map.of());
    assertThat(gate.startable()).containsExactly("back");
    assertThat(gate.waitingFor())
        .containsEntry("front", List.of("back"))
        .containsEntry("side", List.of("back", "front"));

    gate = StartGate.of(FLEET, Map.of("back", deployment(true, 1, 1)));
    assertThat(gate.startable()).containsExactlyInAnyOrder("back", "front");
    assertThat(gate.waitingFor()).containsOnly(Map.entry("side", List.of("front")));
  }

  @Test
  void aRunningAgentKeepsRunningWhenADependencyGoesDown() {
    StartGate gate =
        StartGate.of(
            FLEET, Map.of("back", deployment(false, 1, 0), "front", deployment(true, 1, 1)));
    assertThat(gate.startable()).contains("front");
    assertThat(gate.waitingFor()).containsOnly(Map.entry("side", List.of("back")));
  }

  @Test
  void availableNeedsTheConditionAndAReadyPodUnlessScaledToZero() {
    assertThat(StartGate.available(deployment(true, 1, 0))).isFalse();
    assertThat(StartGate.available(deployment(false, 1, 1))).isFalse();
    assertThat(StartGate.available(deployment(true, 0, 0))).isTrue();
    assertThat(StartGate.available(null)).isFalse();
  }
}
