package ca.helu.pallas.operator.it;

import static ca.helu.pallas.operator.testing.Fixtures.awaitCondition;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.api.PallasNames;
import ca.helu.pallas.operator.dependent.ServiceMonitor;
import ca.helu.pallas.operator.testing.Fixtures;
import ca.helu.pallas.operator.testing.KubeCluster;
import ca.helu.pallas.operator.testing.TestOperator;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The ServiceMonitor exists only when asked for and when the Prometheus Operator's CRD (the real
 * one, from its Go module: tools/go-binaries.sh) is installed; before that a condition says it was
 * skipped and why. Installing the CRD later creates it without a restart.
 */
class ServiceMonitorIT {
  private static final KubernetesClient K8S = KubeCluster.shared().client();
  private static final Path CRD = KubeCluster.SERVICE_MONITOR_CRD;

  @Test
  void skippedUntilTheCrdIsInstalledThenCreatedAndRemovedWhenDisabled() throws IOException {
    TestOperator.shared();
    String ns = KubeCluster.shared().namespace("monitor");
    String spec =
        """
          defaultModel: passthrough
          monitoring: {serviceMonitor: {enabled: true, interval: 15s, labels: {release: prometheus}}}
          agents: [{name: a}]
        """;
    PallasDeployment d = Fixtures.create("fleet", ns, spec);
    Condition degraded = awaitCondition(d, "Degraded", "ServiceMonitorSkipped");
    assertThat(degraded.getStatus()).isEqualTo("True");
    assertThat(degraded.getMessage()).contains("ServiceMonitor CRD", "not installed");

    assertThat(Files.exists(CRD)).as("%s: run tools/go-binaries.sh", CRD).isTrue();
    try (InputStream in = Files.newInputStream(CRD)) {
      CustomResourceDefinition crd =
          K8S.apiextensions().v1().customResourceDefinitions().load(in).item();
      K8S.resource(crd).serverSideApply();
    }
    ServiceMonitor monitor =
        await()
            .atMost(Duration.ofSeconds(60))
            .until(
                () -> K8S.resources(ServiceMonitor.class).inNamespace(ns).withName("fleet").get(),
                m -> m != null);
    assertThat(monitor.getMetadata().getLabels())
        .containsEntry("release", "prometheus")
        .containsAllEntriesOf(PallasNames.instanceLabels("fleet"));
    assertThat(monitor.getMetadata().getOwnerReferences())
        .singleElement()
        .satisfies(ref -> assertThat(ref.getUid()).isEqualTo(d.getMetadata().getUid()));
    Map<String, Object> monitorSpec = monitor.getSpec();
    assertThat(monitorSpec)
        .containsEntry(
            "selector",
            Map.of(
                "matchLabels",
                Map.of(PallasNames.LABEL_NAME, "pallas", PallasNames.LABEL_INSTANCE, "fleet")))
        .containsEntry("namespaceSelector", Map.of("matchNames", List.of(ns)))
        .containsEntry(
            "endpoints", List.of(Map.of("port", "http", "path", "/metrics", "interval", "15s")))
        .containsEntry(
            "targetLabels",
            List.of(
                "app.kubernetes.io/name",
                "app.kubernetes.io/instance",
                "app.kubernetes.io/component"));
    awaitCondition(d, "Degraded", "AsExpected");

    Fixtures.replaceSpec(d, spec.replace("enabled: true", "enabled: false"));
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() ->
            K8S.resources(ServiceMonitor.class).inNamespace(ns).withName("fleet").get() == null);
  }
}
