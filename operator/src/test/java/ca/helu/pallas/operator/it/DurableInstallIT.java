package ca.helu.pallas.operator.it;

import static org.assertj.core.api.Assertions.assertThat;

import ca.helu.pallas.api.PallasNames;
import ca.helu.pallas.operator.testing.ChartOperator;
import ca.helu.pallas.operator.testing.DocCommands;
import ca.helu.pallas.operator.testing.KubeCluster;
import ca.helu.pallas.operator.testing.Readme;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/install.md's "A durable fleet", command by command, on an API server of its own: the real
 * helm installs the chart with its PostgreSQL (a StatefulSet with a volume claim, its Service and
 * the Secret in both namespaces), an upgrade keeps the generated password, the real kubectl applies
 * the fleet, and the operator, under the chart's RBAC, gives every agent pod the store by
 * reference. No kubelet runs here: the database itself is not started.
 */
class DurableInstallIT {
  private static final String SECRET = "pallas-store";

  @Test
  void theDocumentedDurableFleetReadsTheChartsDatabaseByReference(@TempDir Path dir)
      throws Exception {
    List<String> commands =
        Readme.block(Path.of("..", "docs", "install.md"), "### A durable fleet");
    assertThat(commands).hasSize(2);
    assertThat(commands.get(0))
        .startsWith("helm install ")
        .contains("examples/durable/values.yaml");
    assertThat(commands.get(1)).startsWith("kubectl apply ");

    KubeCluster cluster = KubeCluster.withoutCrd();
    try {
      KubernetesClient admin = cluster.client();
      Path kubeconfig = dir.resolve("kubeconfig");
      Files.writeString(kubeconfig, cluster.selfContainedKubeconfig());

      DocCommands.run(commands.get(0), kubeconfig);
      String database = "pallas-pallas-operator-postgresql";
      StatefulSet set =
          admin.apps().statefulSets().inNamespace("pallas-system").withName(database).get();
      assertThat(set.getSpec().getVolumeClaimTemplates()).hasSize(1);
      assertThat(admin.services().inNamespace("pallas-system").withName(database).get())
          .isNotNull();
      Map<String, String> store = data(admin, "pallas-system");
      assertThat(store)
          .containsEntry("url", "jdbc:postgresql://" + database + ".pallas-system.svc:5432/pallas")
          .containsEntry("username", "pallas");
      assertThat(store.get("password")).hasSize(32);
      assertThat(data(admin, "default")).as("the fleet's namespace").isEqualTo(store);

      // the database keeps the password it was created with: an upgrade must too
      DocCommands.run(
          "helm upgrade pallas helm/pallas-operator --namespace pallas-system -f"
              + " examples/durable/values.yaml",
          kubeconfig);
      assertThat(data(admin, "pallas-system")).isEqualTo(store);
      assertThat(data(admin, "default")).isEqualTo(store);

      assertThat(DocCommands.run(commands.get(1), kubeconfig))
          .contains("pallasdeployment.pallas.helu.ca/durable created");
      Deployment operatorDeployment =
          admin
              .apps()
              .deployments()
              .inNamespace("pallas-system")
              .withName("pallas-pallas-operator")
              .get();
      try (ChartOperator operator = new ChartOperator(admin, operatorDeployment)) {
        // the coordinator starts once the helper is available (start order)
        for (String agent : List.of("helper", "coordinator")) {
          Deployment dep =
              cluster.awaitDeployment("default", PallasNames.agentObject("durable", agent));
          Map<String, EnvVar> env =
              dep.getSpec().getTemplate().getSpec().getContainers().get(0).getEnv().stream()
                  .collect(Collectors.toMap(EnvVar::getName, e -> e));
          for (var variable :
              Map.of(
                      "PALLAS_STORE_URL", "url",
                      "PALLAS_STORE_USERNAME", "username",
                      "PALLAS_STORE_PASSWORD", "password")
                  .entrySet()) {
            EnvVar var = env.get(variable.getKey());
            assertThat(var).as("%s of %s", variable.getKey(), agent).isNotNull();
            assertThat(var.getValue()).isNull();
            assertThat(var.getValueFrom().getSecretKeyRef().getName()).isEqualTo(SECRET);
            assertThat(var.getValueFrom().getSecretKeyRef().getKey())
                .isEqualTo(variable.getValue());
          }
          assertThat(dep.toString()).doesNotContain(store.get("password"));
          cluster.markAvailable(dep);
        }
        assertThat(operator.forbidden).isEmpty();
      }
    } finally {
      cluster.stop();
    }
  }

  private static Map<String, String> data(KubernetesClient admin, String namespace) {
    Secret secret = admin.secrets().inNamespace(namespace).withName(SECRET).get();
    assertThat(secret).as("Secret %s in %s", SECRET, namespace).isNotNull();
    return secret.getData().entrySet().stream()
        .collect(
            Collectors.toMap(
                Map.Entry::getKey,
                e -> new String(Base64.getDecoder().decode(e.getValue()), StandardCharsets.UTF_8)));
  }
}
