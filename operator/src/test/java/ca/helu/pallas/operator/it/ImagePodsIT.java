package ca.helu.pallas.operator.it;

import static ca.helu.pallas.operator.testing.Fixtures.awaitAndMarkAvailable;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.api.PallasNames;
import ca.helu.pallas.operator.testing.Fixtures;
import ca.helu.pallas.operator.testing.KubeCluster;
import ca.helu.pallas.operator.testing.LocalPod;
import ca.helu.pallas.operator.testing.TestOperator;
import ca.helu.pallas.runtime.testing.HttpStatus;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The runtime image runs exactly what the operator renders: an agent Deployment and the registry
 * Deployment, each started from {@code pallas-agent-runtime-image.tar} with the container's args
 * verbatim, its env, the ConfigMap at its mount path and (for the registry) its ServiceAccount
 * token where a kubelet puts it, reach {@code /readyz}, and the registry, reading its ConfigMap
 * through the API with that token, lists the agent at the URL the status reports. Both run as a UID
 * the image does not know, in group 0, as OpenShift's restricted-v2 SCC runs them.
 */
class ImagePodsIT {
  private static final KubernetesClient K8S = KubeCluster.shared().client();
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient HTTP = HttpClient.newHttpClient();
  private static final List<LocalPod> PODS = new ArrayList<>();

  @AfterAll
  static void stop() {
    PODS.forEach(LocalPod::close);
  }

  @Test
  void theRuntimeImageRunsTheRenderedPods(@TempDir Path dir) throws Exception {
    TestOperator.shared();
    String ns = KubeCluster.shared().namespace("image");
    int[] ports = LocalPod.freePorts(2);
    PallasDeployment d =
        Fixtures.create(
            "img",
            ns,
            """
              registry: {port: %d}
              defaultModel: passthrough
              # as OpenShift's restricted-v2 SCC runs pods: a UID of the namespace's range
              pod: {securityContext: {runAsUser: 1000650000}}
              agents:
                - {name: helper, port: %d, description: Echoes}
            """
                .formatted(ports[0], ports[1]));
    Deployment agent = awaitAndMarkAvailable(d, "helper");
    Deployment registry = Fixtures.awaitRegistryAndMarkAvailable(d);

    Path hosts = dir.resolve("hosts");
    Files.writeString(
        hosts, "127.0.0.1 localhost " + PallasNames.agentServiceHost("img", ns, "helper") + "\n");
    PODS.add(LocalPod.startImage(K8S, agent, LocalPod.RUNTIME_IMAGE, dir.resolve("helper"), hosts));
    PODS.add(
        LocalPod.startImage(K8S, registry, LocalPod.RUNTIME_IMAGE, dir.resolve("registry"), hosts));
    for (int i = 0; i < ports.length; i++) {
      LocalPod pod = PODS.get(i);
      int port = ports[i];
      await()
          .atMost(Duration.ofSeconds(90))
          .failFast("the pod exited", () -> !pod.isAlive())
          .until(() -> HttpStatus.of("http://127.0.0.1:" + port + "/readyz") == 200);
    }
    // where the kubelet probes the agent
    assertThat(HttpStatus.of("http://127.0.0.1:" + PODS.get(0).probePort() + "/readyz"))
        .isEqualTo(200);

    String url =
        await()
            .atMost(Duration.ofSeconds(30))
            .until(() -> Fixtures.get(d).getStatus().agents(), a -> a != null && a.size() == 1)
            .get(0)
            .url();
    JsonNode servers =
        JSON.readTree(
                HTTP.send(
                        HttpRequest.newBuilder(
                                URI.create(
                                    "http://127.0.0.1:"
                                        + ports[0]
                                        + "/.well-known/mcp/server.json"))
                            .build(),
                        HttpResponse.BodyHandlers.ofString())
                    .body())
            .get("servers");
    assertThat(servers.findValuesAsText("url")).containsExactly(url);
    assertThat(PODS).allSatisfy(pod -> assertThat(pod.isAlive()).as(pod.log()).isTrue());
    // both ran as that UID in group 0, which the image does not know
    for (LocalPod pod : PODS) {
      assertThat(pod.javaStatus())
          .anySatisfy(line -> assertThat(line).matches("Uid:(\\s+1000650000){4}"))
          .anySatisfy(line -> assertThat(line).matches("Gid:(\\s+0){4}"));
    }
  }
}
