package ca.helu.pallas.operator.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.api.PallasNames;
import ca.helu.pallas.operator.testing.Fixtures;
import ca.helu.pallas.operator.testing.KubeCluster;
import ca.helu.pallas.operator.testing.TestOperator;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * spec.tracing reaches every agent pod (docs/observability.md; issue 19 §1): the block in the
 * manifest the pods read, the export's headers from their Secret by reference only, and a new
 * header rolls the agents.
 */
class TracingPodsIT {
  private static final KubernetesClient K8S = KubeCluster.shared().client();
  private static final String HEADERS = "authorization=Bearer%20tok-otel-3c9a";

  @Test
  void theTracingBlockAndItsHeadersSecretReachEveryAgentPodByReference() {
    TestOperator.shared();
    String ns = KubeCluster.shared().namespace("tracing");
    Fixtures.secret(ns, "otel", Map.of("headers", HEADERS));
    PallasDeployment d =
        Fixtures.create(
            "traced",
            ns,
            """
              defaultModel: passthrough
              tracing:
                endpoint: http://jaeger.monitoring.svc:4318
                samplingRatio: 0.5
                headers: {name: otel, key: headers}
              agents: [{name: a}]
            """);
    await().atMost(Duration.ofSeconds(30)).until(() -> Fixtures.agentDeployment(d, "a") != null);
    EnvVar headers =
        Fixtures.agentDeployment(d, "a")
            .getSpec()
            .getTemplate()
            .getSpec()
            .getContainers()
            .get(0)
            .getEnv()
            .stream()
            .filter(e -> e.getName().equals("PALLAS_SECRET_otel__headers"))
            .findFirst()
            .orElseThrow();
    assertThat(headers.getValue()).isNull();
    assertThat(headers.getValueFrom().getSecretKeyRef().getName()).isEqualTo("otel");
    assertThat(headers.getValueFrom().getSecretKeyRef().getKey()).isEqualTo("headers");
    String manifest =
        K8S.configMaps()
            .inNamespace(ns)
            .withName(PallasNames.configMap("traced"))
            .get()
            .getData()
            .get(PallasNames.CONFIG_KEY);
    assertThat(manifest).contains("http://jaeger.monitoring.svc:4318").doesNotContain("tok-otel");
    assertThat(K8S.apps().deployments().inNamespace(ns).list().getItems().toString())
        .doesNotContain("tok-otel");

    String hash = Fixtures.configHash(d, "a");
    Fixtures.secret(ns, "otel", Map.of("headers", "authorization=Bearer%20tok-otel-new"));
    await().atMost(Duration.ofSeconds(30)).until(() -> !Fixtures.configHash(d, "a").equals(hash));
  }
}
