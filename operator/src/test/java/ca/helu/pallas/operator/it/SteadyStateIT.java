package ca.helu.pallas.operator.it;

import static ca.helu.pallas.operator.testing.Fixtures.awaitAndMarkAvailable;
import static ca.helu.pallas.operator.testing.Fixtures.awaitCondition;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.operator.testing.Fixtures;
import ca.helu.pallas.operator.testing.KubeCluster;
import ca.helu.pallas.operator.testing.TestOperator;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Once converged, the operator writes nothing: for 30 s the PallasDeployment and every object it
 * owns keep their resourceVersions, and no event is recorded.
 */
class SteadyStateIT {
  private static final KubernetesClient K8S = KubeCluster.shared().client();

  @Test
  void noWriteAtAllAfterConvergence() {
    TestOperator.shared();
    String ns = KubeCluster.shared().namespace("steady");
    Fixtures.secret(ns, "tools", Map.of("token", "t"));
    PallasDeployment d =
        Fixtures.create(
            "fleet",
            ns,
            """
              defaultModel: passthrough
              providers: {anthropic: {apiKey: {value: inline-key}}}
              mcpServers:
                - name: tools
                  url: http://tools:8080/mcp
                  headers: [{name: Authorization, valueFrom: {secretKeyRef: {name: tools, key: token}}}]
              agents:
                - {name: a, servers: [tools], replicas: 2, resources: {requests: {cpu: 250m, memory: 300Mi}, limits: {memory: 1Gi}}}
                - {name: b, servers: [a], model: anthropic.claude-sonnet-4-5, autoscaling: {maxReplicas: 4}}
              monitoring: {serviceMonitor: {enabled: true}}
            """);
    awaitAndMarkAvailable(d, "a");
    awaitAndMarkAvailable(d, "b");
    Fixtures.awaitRegistryAndMarkAvailable(d);
    awaitCondition(d, "Ready", "AllAgentsReady");
    awaitCondition(d, "Progressing", "Converged");

    Map<String, String> before = snapshot(d, ns);
    await()
        .during(Duration.ofSeconds(30))
        .atMost(Duration.ofSeconds(40))
        .pollInterval(Duration.ofSeconds(1))
        .untilAsserted(() -> assertThat(snapshot(d, ns)).isEqualTo(before));
    assertThat(before).hasSizeGreaterThanOrEqualTo(10);
  }

  private static Map<String, String> snapshot(PallasDeployment d, String ns) {
    Map<String, String> versions = new java.util.TreeMap<>(Fixtures.ownedVersions(d));
    versions.put("PallasDeployment", Fixtures.get(d).getMetadata().getResourceVersion());
    K8S.v1()
        .events()
        .inNamespace(ns)
        .list()
        .getItems()
        .forEach(e ->
            versions.put(
                "Event/" + e.getMetadata().getName(), e.getMetadata().getResourceVersion()));
    return versions;
  }
}
