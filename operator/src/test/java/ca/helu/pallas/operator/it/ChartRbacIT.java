package ca.helu.pallas.operator.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.api.PallasNames;
import ca.helu.pallas.operator.testing.ChartOperator;
import ca.helu.pallas.operator.testing.Fixtures;
import ca.helu.pallas.operator.testing.Helm;
import ca.helu.pallas.operator.testing.KubeCluster;
import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.InputStream;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * RBAC proven, not assumed: the chart's ServiceAccount and RBAC objects, rendered by the real helm
 * and applied to an API server of its own (RBAC authorization on, nothing else installed but the
 * CRDs), and the operator running with a token of that ServiceAccount reconciles a full fleet,
 * ServiceMonitor and leader Lease included (given up when it stops), without a single 403. With
 * watchNamespaces set it reconciles its namespace and can neither read nor write another.
 */
class ChartRbacIT {
  private static final Set<String> RBAC_KINDS =
      Set.of("ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding");

  private static KubeCluster cluster;
  private static KubernetesClient admin;

  @BeforeAll
  static void start() throws Exception {
    cluster = KubeCluster.dedicated();
    admin = cluster.client();
    try (InputStream in = Files.newInputStream(KubeCluster.SERVICE_MONITOR_CRD)) {
      CustomResourceDefinition crd =
          admin.apiextensions().v1().customResourceDefinitions().load(in).item();
      admin.resource(crd).serverSideApply();
    }
  }

  @AfterAll
  static void stop() {
    cluster.stop();
  }

  @Test
  void theClusterRoleReconcilesAFullFleetWithoutA403() throws Exception {
    String ns = namespace("team-all");
    ChartOperator operator = install("all", List.of());
    try (operator) {
      PallasDeployment d = admin.resource(fleet(ns)).create();
      awaitReady(d);
      assertFleetComplete(d);
      // the handshake went out with the operator's own token (no pod answers here: the agents'
      // Service names do not resolve), which the chart lets it request
      await()
          .atMost(Duration.ofSeconds(60))
          .untilAsserted(() ->
              assertThat(admin.resource(d).get().getStatus().conditions())
                  .anySatisfy(c -> {
                    assertThat(c.getType()).isEqualTo("Verified");
                    assertThat(c.getMessage()).contains("unreachable");
                  }));
      assertThat(admin.resource(d).get().getStatus().conditions())
          .noneMatch(c -> String.valueOf(c.getMessage()).contains("cannot get a token"));
      // a problem is reported as a Warning event
      PallasDeployment broken =
          Fixtures.parse(
              "broken",
              ns,
              """
                defaultModel: openai.m
                providers: {openai: {apiKey: {secretKeyRef: {name: nowhere, key: key}}}}
                agents: [{name: a}]
              """);
      admin.resource(broken).create();
      await()
          .atMost(Duration.ofSeconds(30))
          .until(
              () -> admin.v1().events().inNamespace(ns).list().getItems(),
              events ->
                  events.stream()
                      .anyMatch(e ->
                          e.getInvolvedObject().getName().equals("broken")
                              && e.getReason().equals("SecretMissing")));
      assertThat(operator.forbidden).isEmpty();
    }
    // stopped, it gave its Lease up, which the chart's Role allows (issue 17 §8)
    assertThat(
            admin
                .leases()
                .inNamespace("all-system")
                .withName("pallas-operator")
                .get()
                .getSpec()
                .getHolderIdentity())
        .isNull();
    assertThat(operator.forbidden).isEmpty();
  }

  @Test
  void withWatchNamespacesItReconcilesOnlyThoseAndCannotTouchOthers() throws Exception {
    String mine = namespace("team-mine");
    String other = namespace("team-other");
    try (ChartOperator operator = install("some", List.of(mine))) {
      PallasDeployment watched = admin.resource(fleet(mine)).create();
      PallasDeployment ignored = admin.resource(fleet(other)).create();
      awaitReady(watched);
      assertFleetComplete(watched);
      assertThat(operator.forbidden).isEmpty();
      assertThat(
              admin.configMaps().inNamespace(other).withName(PallasNames.configMap("fleet")).get())
          .as("a PallasDeployment outside watchNamespaces is left alone")
          .isNull();
      assertThat(admin.resource(ignored).get().getStatus()).isNull();

      // the ServiceAccount itself may not read or write anywhere else
      KubernetesClient sa = operator.client;
      for (Runnable attempt :
          List.<Runnable>of(
              () -> sa.configMaps().inNamespace(other).list(),
              () -> sa.secrets().inNamespace(other).list(),
              () -> sa.resources(PallasDeployment.class).inNamespace(other).list(),
              () -> sa.resources(PallasDeployment.class).inAnyNamespace().list(),
              () -> sa.apps().deployments().inNamespace(other).list(),
              () ->
                  sa.configMaps()
                      .inNamespace(other)
                      .resource(
                          new io.fabric8.kubernetes.api.model.ConfigMapBuilder()
                              .withNewMetadata()
                              .withName("x")
                              .endMetadata()
                              .build())
                      .create())) {
        assertThatThrownBy(attempt::run)
            .isInstanceOfSatisfying(
                KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(403));
      }
    }
  }

  /**
   * A fleet using everything the operator writes: agents, registry, inline and referenced Secrets,
   * static tokens mounted from a Secret, agents' ServiceAccounts, ServiceMonitor, a
   * PodDisruptionBudget, a HorizontalPodAutoscaler and a NetworkPolicy; and, its agents letting
   * nobody in without a token, the operator's own token for its handshake.
   */
  private static PallasDeployment fleet(String ns) {
    admin
        .resource(
            new SecretBuilder()
                .withNewMetadata()
                .withName("llm")
                .withNamespace(ns)
                .endMetadata()
                .withStringData(Map.of("key", "sk-test"))
                .build())
        .create();
    admin
        .resource(
            new SecretBuilder()
                .withNewMetadata()
                .withName("callers")
                .withNamespace(ns)
                .endMetadata()
                .withStringData(Map.of("daedalus", "tok-test"))
                .build())
        .create();
    return Fixtures.parse(
        "fleet",
        ns,
        """
          defaultModel: passthrough
          providers:
            openai: {apiKey: {secretKeyRef: {name: llm, key: key}}}
            anthropic: {apiKey: {value: inline-key}}
          monitoring: {serviceMonitor: {enabled: true}}
          auth: {staticTokens: {secretName: callers}, openHealth: false}
          agents:
            - {name: helper, replicas: 2}
            - {name: coordinator, servers: [helper], autoscaling: {maxReplicas: 3}}
        """);
  }

  private static void awaitReady(PallasDeployment d) {
    String ns = d.getMetadata().getNamespace();
    for (String agent : List.of("helper", "coordinator")) {
      cluster.markAvailable(cluster.awaitDeployment(ns, PallasNames.agentObject(d.name(), agent)));
    }
    cluster.markAvailable(cluster.awaitDeployment(ns, PallasNames.registryObject(d.name())));
    await()
        .atMost(Duration.ofSeconds(60))
        .until(
            () -> admin.resource(d).get().getStatus(),
            s ->
                s != null
                    && s.conditions() != null
                    && s.conditions().stream()
                        .anyMatch(
                            c -> c.getType().equals("Ready") && c.getStatus().equals("True")));
  }

  private static void assertFleetComplete(PallasDeployment d) {
    String ns = d.getMetadata().getNamespace();
    assertThat(admin.configMaps().inNamespace(ns).withName(PallasNames.configMap("fleet")).get())
        .isNotNull();
    assertThat(admin.services().inNamespace(ns).list().getItems()).hasSize(3);
    assertThat(
            admin
                .serviceAccounts()
                .inNamespace(ns)
                .withName(PallasNames.registryObject("fleet"))
                .get())
        .isNotNull();
    for (String agent : List.of("helper", "coordinator")) {
      assertThat(
              admin
                  .serviceAccounts()
                  .inNamespace(ns)
                  .withName(PallasNames.agentObject("fleet", agent))
                  .get())
          .as("the agent's own identity (spec.auth)")
          .isNotNull();
    }
    assertThat(
            admin
                .rbac()
                .roles()
                .inNamespace(ns)
                .withName(PallasNames.registryObject("fleet"))
                .get())
        .isNotNull();
    assertThat(
            admin
                .rbac()
                .roleBindings()
                .inNamespace(ns)
                .withName(PallasNames.registryObject("fleet"))
                .get())
        .isNotNull();
    assertThat(admin.secrets().inNamespace(ns).list().getItems())
        .extracting(s -> s.getMetadata().getName())
        .contains(PallasNames.inlineSecret("fleet"));
    List<GenericKubernetesResource> monitors =
        admin
            .genericKubernetesResources("monitoring.coreos.com/v1", "ServiceMonitor")
            .inNamespace(ns)
            .list()
            .getItems();
    assertThat(monitors).hasSize(1);
    assertThat(
            admin
                .policy()
                .v1()
                .podDisruptionBudget()
                .inNamespace(ns)
                .withName(PallasNames.agentObject("fleet", "helper"))
                .get())
        .isNotNull();
    assertThat(
            admin
                .autoscaling()
                .v2()
                .horizontalPodAutoscalers()
                .inNamespace(ns)
                .withName(PallasNames.agentObject("fleet", "coordinator"))
                .get())
        .isNotNull();
    assertThat(
            admin
                .network()
                .v1()
                .networkPolicies()
                .inNamespace(ns)
                .withName(PallasNames.networkPolicy("fleet"))
                .get())
        .isNotNull();
    // no reconcile on the way failed (a refusal other than a 403 would show here)
    assertThat(admin.v1().events().inNamespace(ns).list().getItems())
        .noneSatisfy(e -> assertThat(e.getInvolvedObject().getName()).isEqualTo(d.name()));
  }

  private static String namespace(String name) {
    admin
        .resource(new NamespaceBuilder().withNewMetadata().withName(name).endMetadata().build())
        .create();
    return name;
  }

  /**
   * Renders release {@code release} into namespace {@code release-system}, applies its
   * ServiceAccount and RBAC, and starts the operator its Deployment describes.
   */
  private static ChartOperator install(String release, List<String> watchNamespaces)
      throws Exception {
    String system = namespace(release + "-system");
    Helm.Rendered chart =
        watchNamespaces.isEmpty()
            ? Helm.release(release, system)
            : Helm.release(
                release,
                system,
                "--set",
                "watchNamespaces={" + String.join(",", watchNamespaces) + "}");
    for (JsonNode object : chart.objects()) {
      if (RBAC_KINDS.contains(object.get("kind").asText())) {
        admin.resource(object.toString()).serverSideApply();
      }
    }
    Deployment deployment =
        admin
            .getKubernetesSerialization()
            .unmarshal(chart.ofKind("Deployment").get(0).toString(), Deployment.class);
    deployment.getMetadata().setNamespace(system);
    return new ChartOperator(admin, deployment);
  }
}
