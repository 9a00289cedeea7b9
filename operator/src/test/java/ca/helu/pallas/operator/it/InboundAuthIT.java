package ca.helu.pallas.operator.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.api.PallasNames;
import ca.helu.pallas.operator.testing.Fixtures;
import ca.helu.pallas.operator.testing.KubeCluster;
import ca.helu.pallas.operator.testing.TestOperator;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The operator's side of inbound authentication (docs/operator.md, "Pods"; issue 18 §1): a fleet
 * with static tokens gets its Secret mounted in every agent pod, named by PALLAS_STATIC_TOKENS_DIR,
 * never copied; a missing Secret is SecretMissing; a changed token rolls the agents and the
 * registry. Every fleet says in CallersAuthenticated whether its agents ask for a token, and one
 * without says so in a Warning event.
 */
class InboundAuthIT {
  private static final KubernetesClient K8S = KubeCluster.shared().client();
  private static final String TOKEN = "tok-daedalus-5b1e";

  @Test
  void staticTokensAreMountedFromTheirSecretAndAFleetWithoutAuthSaysSo() {
    TestOperator.shared();
    String ns = KubeCluster.shared().namespace("inbound");

    PallasDeployment open =
        Fixtures.create("open", ns, "  defaultModel: passthrough\n  agents: [{name: a}]\n");
    Condition unauthenticated =
        Fixtures.awaitCondition(open, "CallersAuthenticated", "NoInboundAuth");
    assertThat(unauthenticated.getStatus()).isEqualTo("False");
    assertThat(unauthenticated.getMessage()).contains("spec.auth is not set");
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () -> Fixtures.warnings(ns),
            w -> w.stream().anyMatch(m -> m.contains("spec.auth is not set")));

    PallasDeployment d =
        Fixtures.create(
            "guarded",
            ns,
            """
              defaultModel: passthrough
              auth: {staticTokens: {secretName: callers}}
              agents: [{name: a}]
            """);
    assertThat(Fixtures.awaitCondition(d, "Ready", "SecretMissing").getMessage())
        .contains("spec.auth.staticTokens.secretName: Secret 'callers' does not exist");

    Fixtures.secret(ns, "callers", Map.of("daedalus", TOKEN));
    await().atMost(Duration.ofSeconds(30)).until(() -> Fixtures.agentDeployment(d, "a") != null);
    assertThat(Fixtures.awaitCondition(d, "CallersAuthenticated", "StaticTokens").getStatus())
        .isEqualTo("True");
    PodSpec pod = Fixtures.agentDeployment(d, "a").getSpec().getTemplate().getSpec();
    Volume tokens =
        pod.getVolumes().stream().filter(v -> v.getSecret() != null).findFirst().orElseThrow();
    assertThat(tokens.getSecret().getSecretName()).isEqualTo("callers");
    Container agent = pod.getContainers().getFirst();
    assertThat(agent.getVolumeMounts())
        .anySatisfy(m -> {
          assertThat(m.getName()).isEqualTo(tokens.getName());
          assertThat(m.getMountPath()).isEqualTo(PallasNames.STATIC_TOKENS_DIR);
          assertThat(m.getReadOnly()).isTrue();
        });
    assertThat(agent.getEnv())
        .anySatisfy(e -> {
          assertThat(e.getName()).isEqualTo("PALLAS_STATIC_TOKENS_DIR");
          assertThat(e.getValue()).isEqualTo(PallasNames.STATIC_TOKENS_DIR);
        });
    assertThat(K8S.apps().deployments().inNamespace(ns).list().getItems().toString())
        .doesNotContain(TOKEN);
    assertThat(K8S.configMaps().inNamespace(ns).list().getItems().toString()).doesNotContain(TOKEN);

    // the runtime reads its tokens once: a new caller rolls the agent, and the registry, whose
    // /mcp asks for the same tokens
    String hash = Fixtures.configHash(d, "a");
    String registryHash = Fixtures.registryHash(d);
    Fixtures.secret(ns, "callers", Map.of("daedalus", TOKEN, "ops", "tok-ops-77"));
    await().atMost(Duration.ofSeconds(30)).until(() -> !Fixtures.configHash(d, "a").equals(hash));
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> !Fixtures.registryHash(d).equals(registryHash));
  }
}
