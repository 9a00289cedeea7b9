package ca.helu.pallas.operator.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.operator.testing.Fixtures;
import ca.helu.pallas.operator.testing.GoBinaries;
import ca.helu.pallas.operator.testing.KubeCluster;
import ca.helu.pallas.operator.testing.TestOperator;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Deleting a PallasDeployment deletes its whole fleet: Kubernetes' own garbage collector (the real
 * kube-controller-manager, built from the Go module proxy, running only that controller) follows
 * the owner references the operator puts on every object.
 */
class GarbageCollectionIT {
  private static final KubernetesClient K8S = KubeCluster.shared().client();

  @Test
  void deletingAPallasDeploymentDeletesItsFleet(@TempDir Path dir) throws Exception {
    TestOperator.shared();
    String ns = KubeCluster.shared().namespace("gc");
    PallasDeployment d =
        Fixtures.create(
            "gone",
            ns,
            """
              defaultModel: passthrough
              providers: {anthropic: {apiKey: {value: inline-key}}}
              agents: [{name: a, replicas: 2}, {name: b, autoscaling: {maxReplicas: 3}}]
            """);
    // ConfigMap, inline Secret, 2 agent Deployments + Services, a's PodDisruptionBudget, b's
    // HorizontalPodAutoscaler, registry Deployment, Service, ServiceAccount, Role and RoleBinding
    await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> Fixtures.ownedVersions(d).size(), n -> n == 13);

    Path kubeconfig = dir.resolve("kubeconfig");
    Files.writeString(kubeconfig, KubeCluster.shared().selfContainedKubeconfig());
    Process controllerManager =
        new ProcessBuilder(
                List.of(
                    GoBinaries.path("kube-controller-manager").toString(),
                    "--kubeconfig=" + kubeconfig,
                    "--controllers=garbagecollector",
                    "--leader-elect=false",
                    "--secure-port=0",
                    "--use-service-account-credentials=false"))
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("kcm.log").toFile())
            .start();
    try {
      K8S.resource(d).delete();
      await()
          .atMost(Duration.ofSeconds(90))
          .failFast("kube-controller-manager exited", () -> !controllerManager.isAlive())
          .untilAsserted(() -> assertThat(Fixtures.ownedVersions(d)).isEmpty());
    } finally {
      controllerManager.destroy();
      assertThat(controllerManager.waitFor(30, TimeUnit.SECONDS)).isTrue();
    }
  }
}
