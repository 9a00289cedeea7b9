package ca.helu.pallas.operator.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.api.PallasNames;
import ca.helu.pallas.operator.testing.ChartOperator;
import ca.helu.pallas.operator.testing.DocCommands;
import ca.helu.pallas.operator.testing.KubeCluster;
import ca.helu.pallas.operator.testing.LocalPod;
import ca.helu.pallas.operator.testing.Readme;
import ca.helu.pallas.runtime.testing.HttpStatus;
import ca.helu.pallas.runtime.testing.PostgresServer;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * README's "Run it on a cluster", command by command, on an API server of its own with nothing
 * installed: the real helm installs the chart (CRD included), the real kubectl applies the quick
 * start, the operator runs as the installed Deployment describes (its ServiceAccount's token, its
 * env) and makes the fleet Ready, {@code kubectl get pallas} shows the registry URL, and README's
 * curl reads the registry's server.json. No kubelet runs here, so the test plays it: it marks the
 * Deployments available and runs the rendered pods as local processes, the registry on the port
 * that README's {@code kubectl port-forward} would open.
 */
class InstallIT {
  @RegisterExtension static final PostgresServer POSTGRES = new PostgresServer();

  @Test
  void readmeClusterInstallWorksCommandByCommand(@TempDir Path dir) throws Exception {
    List<String> commands = Readme.block("## Run it on a cluster");
    assertThat(commands).hasSize(3);
    assertThat(commands.get(0)).startsWith("helm install ");
    assertThat(commands.get(1)).startsWith("kubectl apply ");
    String[] forwardAndCurl = commands.get(2).split(" & ");
    assertThat(forwardAndCurl[0])
        .startsWith("kubectl port-forward service/quickstart-registry 24200");
    assertThat(forwardAndCurl[1]).startsWith("curl ");

    KubeCluster cluster = KubeCluster.withoutCrd();
    List<LocalPod> pods = new ArrayList<>();
    try {
      KubernetesClient admin = cluster.client();
      Path kubeconfig = dir.resolve("kubeconfig");
      Files.writeString(kubeconfig, cluster.selfContainedKubeconfig());

      String installed = run(commands.get(0), kubeconfig);
      // and NOTES.txt tells the next steps: README's
      assertThat(installed)
          .contains(
              "STATUS: deployed", commands.get(1), "kubectl get pallas", "quickstart-registry");
      Deployment operatorDeployment =
          admin
              .apps()
              .deployments()
              .inNamespace("pallas-system")
              .withName("pallas-pallas-operator")
              .get();
      assertThat(operatorDeployment).isNotNull();
      assertThat(
              admin
                  .apiextensions()
                  .v1()
                  .customResourceDefinitions()
                  .withName("pallasdeployments.pallas.helu.ca")
                  .get()
                  .getMetadata()
                  .getAnnotations())
          .containsEntry("helm.sh/resource-policy", "keep");

      // the quick start's values: the chart's PostgreSQL, its Secret in the fleet's namespace; with
      // no kubelet here the database the StatefulSet would run is a local one, named in the Secret
      Secret store = admin.secrets().inNamespace("default").withName("pallas-store").get();
      assertThat(decoded(store, "url"))
          .isEqualTo(
              "jdbc:postgresql://pallas-pallas-operator-postgresql.pallas-system.svc:5432/pallas");
      String database = POSTGRES.newDatabase();
      admin
          .secrets()
          .inNamespace("default")
          .withName("pallas-store")
          .edit(secret -> {
            secret.setData(null);
            secret.setStringData(
                Map.of(
                    "url", database,
                    "username", PostgresServer.USER,
                    "password", PostgresServer.PASSWORD));
            return secret;
          });

      assertThat(run(commands.get(1), kubeconfig))
          .contains("pallasdeployment.pallas.helu.ca/quickstart created");

      try (ChartOperator operator = new ChartOperator(admin, operatorDeployment)) {
        PallasDeployment d =
            admin
                .resources(PallasDeployment.class)
                .inNamespace("default")
                .withName("quickstart")
                .get();
        Path hosts = dir.resolve("hosts");
        Files.writeString(
            hosts,
            "127.0.0.1 "
                + PallasNames.agentServiceHost("quickstart", "default", "helper")
                + " "
                + PallasNames.agentServiceHost("quickstart", "default", "coordinator")
                + "\n");
        // what the Deployment controller and the kubelet would do, agent by agent (start order)
        for (String agent : List.of("helper", "coordinator")) {
          Deployment dep =
              cluster.awaitDeployment("default", PallasNames.agentObject("quickstart", agent));
          pods.add(LocalPod.start(admin, dep, dir.resolve(agent), hosts, null));
          cluster.markAvailable(dep);
        }
        Deployment registry =
            cluster.awaitDeployment("default", PallasNames.registryObject("quickstart"));
        pods.add(
            LocalPod.start(
                admin,
                registry,
                dir.resolve("registry"),
                hosts,
                LocalPod.serviceAccountKubeconfig(
                    admin, "default", PallasNames.registryObject("quickstart"))));
        cluster.markAvailable(registry);

        String url = "http://quickstart-registry.default.svc:24200/.well-known/mcp/server.json";
        await()
            .atMost(Duration.ofSeconds(60))
            .untilAsserted(() ->
                assertThat(kubectl(kubeconfig, "get", "pallas"))
                    .containsPattern("quickstart\\s+True\\s+2/2\\s+" + url.replace(".", "\\.")));
        assertThat(operator.forbidden).isEmpty();
        assertThat(admin.resource(d).get().getStatus().registryUrl()).isEqualTo(url);

        // the quick start keeps its conversations in the chart's store: each agent process
        // registers itself there (docs/runtime.md, "Sessions")
        assertThat(
                admin.resource(d).get().getStatus().conditions().stream()
                    .filter(c -> c.getType().equals("ConversationsDurable"))
                    .findFirst()
                    .orElseThrow()
                    .getMessage())
            .isEqualTo(
                "the agents keep their conversations in the PostgreSQL of Secret 'pallas-store'"
                    + " (the operator's default store)");
        await()
            .atMost(Duration.ofSeconds(30))
            .ignoreExceptions()
            .until(() -> replicas(database), n -> n == 2);

        // README's curl, once the registry answers where port-forward would listen
        await()
            .atMost(Duration.ofSeconds(90))
            .until(() -> HttpStatus.of("http://127.0.0.1:24200/readyz") == 200);
        JsonNode servers =
            await()
                .atMost(Duration.ofSeconds(30))
                .until(
                    () ->
                        new ObjectMapper()
                            .readTree(run(forwardAndCurl[1], kubeconfig))
                            .get("servers"),
                    s -> s != null && s.size() == 2);
        assertThat(servers.findValuesAsText("url"))
            .containsExactlyInAnyOrder(
                "http://quickstart-helper.default.svc:24201/mcp",
                "http://quickstart-coordinator.default.svc:24202/mcp");
      }
    } finally {
      pods.forEach(LocalPod::close);
      cluster.stop();
    }
  }

  private static String decoded(Secret secret, String key) {
    return new String(
        Base64.getDecoder().decode(secret.getData().get(key)), StandardCharsets.UTF_8);
  }

  /** Agent processes alive in the store's database (its table pallas_replica). */
  private static int replicas(String url) throws SQLException {
    try (Connection c =
            DriverManager.getConnection(url, PostgresServer.USER, PostgresServer.PASSWORD);
        Statement s = c.createStatement();
        ResultSet r = s.executeQuery("SELECT count(*) FROM pallas_replica")) {
      r.next();
      return r.getInt(1);
    }
  }

  /** A README command, from the repository's root, with this cluster's kubeconfig. */
  private static String run(String command, Path kubeconfig) throws Exception {
    return DocCommands.run(command, kubeconfig);
  }

  private static String kubectl(Path kubeconfig, String... args) throws Exception {
    return run("kubectl " + String.join(" ", args), kubeconfig);
  }
}
