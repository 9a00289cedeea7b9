package ca.helu.pallas.operator.it;

import static ca.helu.pallas.operator.testing.Fixtures.agentDeployment;
import static ca.helu.pallas.operator.testing.Fixtures.awaitAndMarkAvailable;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.api.PallasNames;
import ca.helu.pallas.operator.testing.Fixtures;
import ca.helu.pallas.operator.testing.KubeCluster;
import ca.helu.pallas.operator.testing.TestOperator;
import io.fabric8.kubernetes.api.model.TopologySpreadConstraint;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * An agent of several pods survives a node drain and a lost node or zone (docs/operator.md,
 * "Disruptions"): it has a PodDisruptionBudget of one pod down at a time, owned by the
 * PallasDeployment, for as long as it runs more than one pod; and every agent's pods are spread
 * over nodes and zones.
 */
class DisruptionIT {
  private static final KubernetesClient K8S = KubeCluster.shared().client();
  private static final String SPEC =
      """
        defaultModel: passthrough
        agents:
          - {name: a, replicas: 2}
          - {name: b}
          - {name: c, autoscaling: {minReplicas: 2, maxReplicas: 4}}
          - {name: d, autoscaling: {maxReplicas: 4}}
      """;

  @Test
  void agentsOfSeveralPodsHaveADisruptionBudgetAndEveryAgentSpreads() {
    TestOperator.shared();
    String ns = KubeCluster.shared().namespace("disrupt");
    PallasDeployment d = Fixtures.create("spread", ns, SPEC);
    List.of("a", "b", "c", "d").forEach(agent -> awaitAndMarkAvailable(d, agent));

    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> budgets(ns), b -> b.equals(Set.of("spread-a", "spread-c")));
    PodDisruptionBudget budget =
        K8S.policy().v1().podDisruptionBudget().inNamespace(ns).withName("spread-a").get();
    assertThat(budget.getSpec().getMaxUnavailable().getIntVal()).isEqualTo(1);
    assertThat(budget.getSpec().getSelector().getMatchLabels())
        .isEqualTo(PallasNames.agentSelector("spread", "a"));
    assertThat(budget.getMetadata().getOwnerReferences())
        .singleElement()
        .satisfies(o -> {
          assertThat(o.getUid()).isEqualTo(Fixtures.get(d).getMetadata().getUid());
          assertThat(o.getController()).isTrue();
        });

    for (String agent : List.of("a", "b")) {
      List<TopologySpreadConstraint> spread =
          agentDeployment(d, agent)
              .getSpec()
              .getTemplate()
              .getSpec()
              .getTopologySpreadConstraints();
      assertThat(spread)
          .extracting(TopologySpreadConstraint::getTopologyKey)
          .containsExactly("kubernetes.io/hostname", "topology.kubernetes.io/zone");
      assertThat(spread)
          .allSatisfy(c -> {
            assertThat(c.getWhenUnsatisfiable()).isEqualTo("ScheduleAnyway");
            assertThat(c.getMaxSkew()).isEqualTo(1);
            assertThat(c.getLabelSelector().getMatchLabels())
                .isEqualTo(PallasNames.agentSelector("spread", agent));
          });
    }

    // a drops to one pod and loses its budget; b grows to three and gains one
    Fixtures.replaceSpec(
        d,
        SPEC.replace("{name: a, replicas: 2}", "{name: a}")
            .replace("{name: b}", "{name: b, replicas: 3}"));
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> budgets(ns), b -> b.equals(Set.of("spread-b", "spread-c")));
  }

  private static Set<String> budgets(String ns) {
    return K8S.policy().v1().podDisruptionBudget().inNamespace(ns).list().getItems().stream()
        .map(b -> b.getMetadata().getName())
        .collect(Collectors.toSet());
  }
}
