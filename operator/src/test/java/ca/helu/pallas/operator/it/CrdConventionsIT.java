package ca.helu.pallas.operator.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.api.PallasDeploymentStatus;
import ca.helu.pallas.operator.testing.Fixtures;
import ca.helu.pallas.operator.testing.KubeCluster;
import ca.helu.pallas.operator.testing.TestOperator;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The CRD follows Kubernetes' conventions, checked on a real API server with the real kubectl:
 * fleets are found by category, a status holds at most one condition of each type, and the printer
 * columns stay. No operator runs here: the fleet is left to another one and its status is written
 * by the test.
 */
class CrdConventionsIT {
  private static final KubernetesClient K8S = KubeCluster.shared().client();

  private static PallasDeployment fleet(String ns) {
    PallasDeployment d =
        Fixtures.parse("found", ns, "  defaultModel: passthrough\n  agents: [{name: a}]\n");
    d.getMetadata().setLabels(Map.of(TestOperator.OTHER_OPERATOR, "none"));
    return K8S.resource(d).create();
  }

  @Test
  void fleetsAreListedByTheirCategories() throws Exception {
    String ns = KubeCluster.shared().namespace("categories");
    fleet(ns);
    for (String category : List.of("mcp", "pallas")) {
      // the API server publishes a CRD's categories in its discovery a moment after the CRD is
      // established, and kubectl caches discovery: a fresh cache, until it is published
      await()
          .atMost(Duration.ofSeconds(30))
          .untilAsserted(() ->
              assertThat(
                      KubeCluster.shared()
                          .kubectl(
                              "get",
                              category,
                              "-n",
                              ns,
                              "-o",
                              "name",
                              "--cache-dir",
                              Files.createTempDirectory("kubectl-cache").toString())
                          .lines()
                          .toList())
                  .as("kubectl get %s", category)
                  .containsExactly("pallasdeployment.pallas.helu.ca/found"));
    }
  }

  @Test
  void aStatusHoldsOneConditionPerType() {
    String ns = KubeCluster.shared().namespace("conditions");
    PallasDeployment d = fleet(ns);
    d.setStatus(status(ready("True"), ready("False")));
    assertThatThrownBy(() -> K8S.resource(d).updateStatus())
        .isInstanceOf(KubernetesClientException.class)
        .hasMessageContaining("status.conditions[1]")
        .hasMessageContaining("Duplicate value");

    // a condition without a type cannot be keyed, so the API server refuses it too
    PallasDeployment again = Fixtures.get(d);
    again.setStatus(status(new ConditionBuilder().withStatus("True").build()));
    assertThatThrownBy(() -> K8S.resource(again).updateStatus())
        .isInstanceOf(KubernetesClientException.class)
        .hasMessageContaining("status.conditions[0].type")
        .hasMessageContaining("Required value");
  }

  @Test
  void thePrinterColumnsStay() throws Exception {
    String ns = KubeCluster.shared().namespace("columns");
    PallasDeployment d = fleet(ns);
    d.setStatus(status(ready("True")));
    K8S.resource(d).updateStatus();
    List<String> table = KubeCluster.shared().kubectl("get", "pallas", "-n", ns).lines().toList();
    assertThat(table.get(0).split("\\s+"))
        .containsExactly("NAME", "READY", "AGENTS", "REGISTRY", "URL", "AGE");
    assertThat(table.get(1).split("\\s+")).startsWith("found", "True", "1/1");
  }

  private static PallasDeploymentStatus status(Condition... conditions) {
    return new PallasDeploymentStatus(1L, List.of(conditions), null, "1/1", null);
  }

  private static Condition ready(String status) {
    return new ConditionBuilder()
        .withType("Ready")
        .withStatus(status)
        .withReason("Test")
        .withMessage("written by the test")
        .withLastTransitionTime("2026-01-01T00:00:00Z")
        .build();
  }
}
