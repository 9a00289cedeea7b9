package ca.helu.pallas.operator.it;

import static ca.helu.pallas.operator.testing.Fixtures.agentDeployment;
import static ca.helu.pallas.operator.testing.Fixtures.awaitCondition;
import static ca.helu.pallas.operator.testing.Fixtures.configHash;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.api.PallasNames;
import ca.helu.pallas.operator.PallasOperator;
import ca.helu.pallas.operator.testing.Fixtures;
import ca.helu.pallas.operator.testing.KubeCluster;
import ca.helu.pallas.operator.testing.TestOperator;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The conversation store reaches every agent pod by reference (docs/operator.md, "The conversation
 * store"): PALLAS_STORE_URL, _USERNAME and _PASSWORD from the keys of the Secret that
 * spec.store.secretName names, never their values; a missing Secret or key is a SecretMissing
 * condition and a Warning event naming the field; a changed password rolls the agents.
 */
class StoreIT {
  private static final KubernetesClient K8S = KubeCluster.shared().client();
  private static final String PASSWORD = "pg-Secret-9f2c";

  @Test
  void everyAgentPodReadsTheStoreFromItsSecretByReference() {
    TestOperator.shared();
    String ns = KubeCluster.shared().namespace("store");
    PallasDeployment d =
        Fixtures.create(
            "durable",
            ns,
            """
              defaultModel: passthrough
              store: {secretName: pallas-store}
              agents: [{name: a}, {name: b, instanceScope: connection}]
            """);
    var missing = awaitCondition(d, "Ready", "SecretMissing");
    assertThat(missing.getMessage())
        .contains("spec.store.secretName: Secret 'pallas-store' does not exist");
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () -> Fixtures.warnings(ns), w -> w.stream().anyMatch(m -> m.contains("pallas-store")));
    assertThat(agentDeployment(d, "a")).as("nothing runs without its store").isNull();

    Fixtures.secret(ns, "pallas-store", Map.of("url", "jdbc:postgresql://pg:5432/pallas"));
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () -> Fixtures.condition(d, "Ready").orElseThrow().getMessage(),
            m -> m.contains("Secret 'pallas-store' has no key 'password'"));

    Fixtures.secret(
        ns,
        "pallas-store",
        Map.of(
            "url", "jdbc:postgresql://pg:5432/pallas", "username", "pallas", "password", PASSWORD));
    for (String agent : List.of("a", "b")) {
      await().atMost(Duration.ofSeconds(30)).until(() -> agentDeployment(d, agent) != null);
      List<EnvVar> env =
          agentDeployment(d, agent)
              .getSpec()
              .getTemplate()
              .getSpec()
              .getContainers()
              .get(0)
              .getEnv();
      for (String[] variable :
          List.of(
              new String[] {"PALLAS_STORE_URL", "url"},
              new String[] {"PALLAS_STORE_USERNAME", "username"},
              new String[] {"PALLAS_STORE_PASSWORD", "password"})) {
        EnvVar var =
            env.stream().filter(e -> e.getName().equals(variable[0])).findFirst().orElseThrow();
        assertThat(var.getValue()).as("never the value").isNull();
        assertThat(var.getValueFrom().getSecretKeyRef().getName()).isEqualTo("pallas-store");
        assertThat(var.getValueFrom().getSecretKeyRef().getKey()).isEqualTo(variable[1]);
      }
    }
    assertThat(
            K8S.configMaps()
                .inNamespace(ns)
                .withName(PallasNames.configMap("durable"))
                .get()
                .getData()
                .toString())
        .doesNotContain(PASSWORD);
    assertThat(K8S.apps().deployments().inNamespace(ns).list().getItems().toString())
        .doesNotContain(PASSWORD);

    // a pod reads its environment once: a new password rolls every agent
    String a = configHash(d, "a");
    String b = configHash(d, "b");
    Fixtures.secret(
        ns,
        "pallas-store",
        Map.of("url", "jdbc:postgresql://pg:5432/pallas", "username", "pallas", "password", "new"));
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> !configHash(d, "a").equals(a) && !configHash(d, "b").equals(b));
  }

  /**
   * The chart's {@code store.fleetDefault} (PALLAS_DEFAULT_STORE_SECRET): a fleet without
   * spec.store keeps its conversations in memory until its namespace holds the default Secret, then
   * its agents roll onto that store, by reference; a fleet naming its own store keeps it. The
   * condition ConversationsDurable says which.
   */
  @Test
  void aFleetWithoutAStoreTakesTheOperatorsDefaultOnceItsSecretExists() throws Exception {
    String selected = "store-default";
    try (PallasOperator operator =
        TestOperator.selecting(selected, Map.of("PALLAS_DEFAULT_STORE_SECRET", "pallas-store"))) {
      String ns = KubeCluster.shared().namespace("store-default");
      PallasDeployment parsed =
          Fixtures.parse("quick", ns, "  defaultModel: passthrough\n  agents: [{name: a}]\n");
      parsed.getMetadata().setLabels(Map.of(TestOperator.OTHER_OPERATOR, selected));
      PallasDeployment d = K8S.resource(parsed).create();

      var inMemory = awaitCondition(d, "ConversationsDurable", "InMemory");
      assertThat(inMemory.getStatus()).isEqualTo("False");
      assertThat(inMemory.getMessage()).contains("in memory", "store.fleetDefault");
      await().atMost(Duration.ofSeconds(30)).until(() -> agentDeployment(d, "a") != null);
      assertThat(storeVariable(d, "a")).as("in memory: no store").isEmpty();

      Fixtures.secret(
          ns,
          "pallas-store",
          Map.of(
              "url",
              "jdbc:postgresql://pg:5432/pallas",
              "username",
              "pallas",
              "password",
              PASSWORD));
      var durable = awaitCondition(d, "ConversationsDurable", "StoreConfigured");
      assertThat(durable.getStatus()).isEqualTo("True");
      assertThat(durable.getMessage())
          .isEqualTo(
              "the agents keep their conversations in the PostgreSQL of Secret 'pallas-store'"
                  + " (the operator's default store)");
      await().atMost(Duration.ofSeconds(30)).until(() -> storeVariable(d, "a").isPresent());
      assertThat(storeVariable(d, "a").orElseThrow().getValueFrom().getSecretKeyRef().getName())
          .isEqualTo("pallas-store");

      // a fleet naming its own store keeps it, and names it without "default"
      PallasDeployment own =
          Fixtures.parse(
              "own",
              ns,
              "  defaultModel: passthrough\n  store: {secretName: other-store}\n"
                  + "  agents: [{name: a}]\n");
      own.getMetadata().setLabels(Map.of(TestOperator.OTHER_OPERATOR, selected));
      Fixtures.secret(
          ns,
          "other-store",
          Map.of("url", "jdbc:postgresql://pg:5432/other", "username", "o", "password", "p"));
      PallasDeployment o = K8S.resource(own).create();
      assertThat(awaitCondition(o, "ConversationsDurable", "StoreConfigured").getMessage())
          .endsWith("Secret 'other-store'");
      await().atMost(Duration.ofSeconds(30)).until(() -> storeVariable(o, "a").isPresent());
      assertThat(storeVariable(o, "a").orElseThrow().getValueFrom().getSecretKeyRef().getName())
          .isEqualTo("other-store");
    }
  }

  private static Optional<EnvVar> storeVariable(PallasDeployment d, String agent) {
    var deployment = agentDeployment(d, agent);
    return deployment == null
        ? Optional.empty()
        : deployment.getSpec().getTemplate().getSpec().getContainers().get(0).getEnv().stream()
            .filter(e -> e.getName().equals("PALLAS_STORE_URL"))
            .findFirst();
  }
}
