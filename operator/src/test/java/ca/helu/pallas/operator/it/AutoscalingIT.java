package ca.helu.pallas.operator.it;

import static ca.helu.pallas.operator.testing.Fixtures.agentDeployment;
import static ca.helu.pallas.operator.testing.Fixtures.awaitAndMarkAvailable;
import static ca.helu.pallas.operator.testing.Fixtures.configHash;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.api.PallasNames;
import ca.helu.pallas.operator.testing.Fixtures;
import ca.helu.pallas.operator.testing.KubeCluster;
import ca.helu.pallas.operator.testing.TestOperator;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscaler;
import io.fabric8.kubernetes.api.model.autoscaling.v2.MetricSpec;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * An agent with {@code autoscaling} gets a HorizontalPodAutoscaler on its calls in flight, and the
 * operator leaves the Deployment's replicas to it: a count the autoscaler (another field manager)
 * set survives the operator's next apply (docs/operator.md, "Scaling").
 */
class AutoscalingIT {
  private static final KubernetesClient K8S = KubeCluster.shared().client();
  private static final String SPEC =
      """
        defaultModel: passthrough
        agents:
          - {name: a, instruction: one, autoscaling: {minReplicas: 2, maxReplicas: 6, targetInFlightCalls: 3}}
          - {name: b}
      """;

  @Test
  void theAutoscalerOwnsTheReplicasOfAnAutoscaledAgent() {
    TestOperator.shared();
    String ns = KubeCluster.shared().namespace("autoscale");
    PallasDeployment d = Fixtures.create("scaled", ns, SPEC);
    awaitAndMarkAvailable(d, "a");
    awaitAndMarkAvailable(d, "b");
    String name = PallasNames.agentObject("scaled", "a");

    HorizontalPodAutoscaler hpa =
        await().atMost(Duration.ofSeconds(30)).until(() -> autoscaler(ns, name), h -> h != null);
    assertThat(hpa.getMetadata().getOwnerReferences())
        .singleElement()
        .satisfies(o -> assertThat(o.getUid()).isEqualTo(Fixtures.get(d).getMetadata().getUid()));
    assertThat(hpa.getSpec().getScaleTargetRef().getName()).isEqualTo(name);
    assertThat(hpa.getSpec().getScaleTargetRef().getKind()).isEqualTo("Deployment");
    assertThat(hpa.getSpec().getMinReplicas()).isEqualTo(2);
    assertThat(hpa.getSpec().getMaxReplicas()).isEqualTo(6);
    MetricSpec metric = hpa.getSpec().getMetrics().get(0);
    assertThat(metric.getType()).isEqualTo("Pods");
    assertThat(metric.getPods().getMetric().getName()).isEqualTo("pallas_send_message_in_flight");
    assertThat(metric.getPods().getTarget().getAverageValue().toString()).isEqualTo("3");
    assertThat(autoscaler(ns, PallasNames.agentObject("scaled", "b")))
        .as("an agent without autoscaling has no autoscaler")
        .isNull();

    // the autoscaler scales the Deployment through its scale subresource, as the HPA controller
    // does; then a spec change makes the operator apply the Deployment again
    K8S.apps().deployments().inNamespace(ns).withName(name).scale(5);
    String hash = configHash(d, "a");
    Fixtures.replaceSpec(d, SPEC.replace("instruction: one", "instruction: 1"));
    await().atMost(Duration.ofSeconds(30)).until(() -> !configHash(d, "a").equals(hash));
    assertThat(agentDeployment(d, "a").getSpec().getReplicas())
        .as("the operator's apply leaves the autoscaler's replica count")
        .isEqualTo(5);
    assertThat(appliers(agentDeployment(d, "a"), "f:template")).isNotEmpty();
    assertThat(appliers(agentDeployment(d, "a"), "f:replicas"))
        .as("the operator does not claim spec.replicas")
        .isEmpty();

    // back to a fixed count: the operator sets it and the autoscaler goes
    Fixtures.replaceSpec(
        d,
        SPEC.replace("instruction: one", "instruction: 1")
            .replace(
                "autoscaling: {minReplicas: 2, maxReplicas: 6, targetInFlightCalls: 3}",
                "replicas: 3"));
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> agentDeployment(d, "a").getSpec().getReplicas() == 3);
    await().atMost(Duration.ofSeconds(30)).until(() -> autoscaler(ns, name) == null);
  }

  /**
   * Dropping replicas from an apply would reset them to Kubernetes' default of 1 until the
   * autoscaler scales back: the operator hands the count over first (docs/operator.md, "Scaling").
   */
  @Test
  void switchingToAutoscalingKeepsThePodsRunning() {
    TestOperator.shared();
    String ns = KubeCluster.shared().namespace("autoscale");
    String fixed = "  defaultModel: passthrough\n  agents: [{name: a, replicas: 3}]\n";
    PallasDeployment d = Fixtures.create("handover", ns, fixed);
    awaitAndMarkAvailable(d, "a");
    assertThat(agentDeployment(d, "a").getSpec().getReplicas()).isEqualTo(3);
    String name = PallasNames.agentObject("handover", "a");

    Fixtures.replaceSpec(d, fixed.replace("replicas: 3", "autoscaling: {maxReplicas: 6}"));
    // the autoscaler is applied after the Deployment, in the same reconcile
    await().atMost(Duration.ofSeconds(30)).until(() -> autoscaler(ns, name), h -> h != null);
    assertThat(agentDeployment(d, "a").getSpec().getReplicas()).isEqualTo(3);
    Deployment after = agentDeployment(d, "a");
    assertThat(appliers(after, "f:replicas"))
        .as("the operator's apply lets the count go; the hand-over's holds it for the autoscaler")
        .containsExactly("pallas-operator-replicas-handover")
        .doesNotContainAnyElementsOf(appliers(after, "f:template"));
  }

  /** The field managers whose server-side apply holds {@code spec.<field>}. */
  private static List<String> appliers(Deployment d, String field) {
    return d.getMetadata().getManagedFields().stream()
        .filter(f -> "Apply".equals(f.getOperation()))
        .filter(f ->
            f.getFieldsV1().getAdditionalProperties().get("f:spec") instanceof Map<?, ?> spec
                && spec.containsKey(field))
        .map(f -> f.getManager())
        .toList();
  }

  private static HorizontalPodAutoscaler autoscaler(String ns, String name) {
    return K8S.autoscaling().v2().horizontalPodAutoscalers().inNamespace(ns).withName(name).get();
  }
}
