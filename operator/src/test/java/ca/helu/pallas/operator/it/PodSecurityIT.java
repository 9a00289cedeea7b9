package ca.helu.pallas.operator.it;

import static ca.helu.pallas.operator.testing.Fixtures.awaitAndMarkAvailable;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.api.PallasNames;
import ca.helu.pallas.operator.testing.Fixtures;
import ca.helu.pallas.operator.testing.KubeCluster;
import ca.helu.pallas.operator.testing.TestOperator;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodSecurityContext;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Every pod template the operator renders is admitted by Pod Security "restricted": a server-side
 * dry-run Pod create in a namespace that enforces it (and a pod that is not hardened is refused
 * there, so the check is real). No template fixes a user or group unless {@code securityContext}
 * asks for one, so OpenShift's restricted-v2 SCC can assign its own (docs/install.md, "OpenShift").
 */
class PodSecurityIT {
  private static final KubernetesClient K8S = KubeCluster.shared().client();

  @Test
  void everyRenderedPodIsAdmittedUnderRestricted() {
    TestOperator.shared();
    String ns =
        KubeCluster.shared()
            .namespace("restricted", Map.of("pod-security.kubernetes.io/enforce", "restricted"));
    Fixtures.secret(ns, "llm", Map.of("key", "k"));
    PallasDeployment d =
        Fixtures.create(
            "fleet",
            ns,
            """
              defaultModel: passthrough
              providers: {openai: {apiKey: {secretKeyRef: {name: llm, key: key}}}}
              agents:
                - {name: a, model: openai.qwen3}
                - name: b
                  servers: [a]
                  pod: {securityContext: {runAsUser: 1000650000, fsGroup: 1000650000}}
            """);
    awaitAndMarkAvailable(d, "a");
    awaitAndMarkAvailable(d, "b");
    Deployment registry = Fixtures.awaitRegistryAndMarkAvailable(d);
    List<Deployment> deployments =
        List.of(Fixtures.agentDeployment(d, "a"), Fixtures.agentDeployment(d, "b"), registry);
    for (Deployment deployment : deployments) {
      Pod pod =
          new PodBuilder()
              .withNewMetadata()
              .withName(deployment.getMetadata().getName() + "-dry-run")
              .withNamespace(ns)
              .withLabels(deployment.getSpec().getTemplate().getMetadata().getLabels())
              .endMetadata()
              .withSpec(deployment.getSpec().getTemplate().getSpec())
              .build();
      Pod admitted = K8S.resource(pod).dryRun().create();
      assertThat(admitted.getMetadata().getUid()).isNotBlank();
    }
    // the image's user, or the platform's; b's own, as asked
    for (Deployment deployment : List.of(deployments.get(0), registry)) {
      PodSecurityContext security =
          deployment.getSpec().getTemplate().getSpec().getSecurityContext();
      assertThat(security.getRunAsNonRoot()).isTrue();
      assertThat(security.getRunAsUser()).isNull();
      assertThat(security.getRunAsGroup()).isNull();
      assertThat(security.getFsGroup()).isNull();
    }
    PodSecurityContext b =
        deployments.get(1).getSpec().getTemplate().getSpec().getSecurityContext();
    assertThat(b.getRunAsUser()).isEqualTo(1000650000L);
    assertThat(b.getFsGroup()).isEqualTo(1000650000L);
    assertThat(b.getRunAsGroup()).isNull();
    assertThat(b.getSeccompProfile().getType()).isEqualTo("RuntimeDefault");

    Pod plain =
        new PodBuilder()
            .withNewMetadata()
            .withName("plain")
            .withNamespace(ns)
            .endMetadata()
            .withNewSpec()
            .addNewContainer()
            .withName("c")
            .withImage(PallasNames.APP)
            .endContainer()
            .endSpec()
            .build();
    assertThatThrownBy(() -> K8S.resource(plain).dryRun().create())
        .isInstanceOf(KubernetesClientException.class)
        .hasMessageContaining("violates PodSecurity \"restricted");
    await()
        .atMost(Duration.ofSeconds(1))
        .until(() -> K8S.pods().inNamespace(ns).list().getItems().isEmpty());
  }
}
