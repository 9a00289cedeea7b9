package ca.helu.pallas.operator.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.operator.PallasOperator;
import ca.helu.pallas.operator.testing.Fixtures;
import ca.helu.pallas.operator.testing.KubeCluster;
import ca.helu.pallas.operator.testing.TestOperator;
import ca.helu.pallas.runtime.testing.JaegerServer;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The operator traces its reconciles (issue 19 §1; docs/observability.md, "The operator's traces"):
 * configured by the standard OTEL_* variables, each reconcile of a PallasDeployment is a span in a
 * real Jaeger, naming the fleet and its namespace and what the reconcile did.
 */
class ReconcileTracingIT {
  @RegisterExtension static final JaegerServer JAEGER = new JaegerServer();
  private static final KubernetesClient K8S = KubeCluster.shared().client();
  private static final String SELECTED = "traced";

  @Test
  void eachReconcileIsASpanNamingTheFleet() throws Exception {
    try (PallasOperator operator =
        TestOperator.selecting(
            SELECTED,
            Map.of(
                "OTEL_EXPORTER_OTLP_ENDPOINT", JAEGER.otlpEndpoint(),
                "OTEL_SERVICE_NAME", "pallas-operator-traced",
                "OTEL_BSP_SCHEDULE_DELAY", "100"))) {
      String ns = KubeCluster.shared().namespace("traced");
      PallasDeployment parsed =
          Fixtures.parse("reconciled", ns, "  defaultModel: passthrough\n  agents: [{name: a}]\n");
      parsed.getMetadata().setLabels(Map.of(TestOperator.OTHER_OPERATOR, SELECTED));
      K8S.resource(parsed).create();

      List<JaegerServer.Span> spans =
          await()
              .atMost(Duration.ofSeconds(60))
              .pollInterval(Duration.ofMillis(300))
              .until(
                  () -> JAEGER.traces("pallas-operator-traced"),
                  found ->
                      found.stream()
                          .anyMatch(s -> "reconciled".equals(s.tag("pallas.deployment"))));
      JaegerServer.Span reconcile =
          spans.stream()
              .filter(s -> "reconciled".equals(s.tag("pallas.deployment")))
              .findFirst()
              .orElseThrow();
      assertThat(reconcile.name()).startsWith("reconcile ");
      assertThat(reconcile.tag("k8s.namespace.name")).isEqualTo(ns);
      assertThat(reconcile.tag("pallas.outcome")).isNotBlank();
      assertThat(reconcile.parentId()).isEmpty();
    }
  }
}
