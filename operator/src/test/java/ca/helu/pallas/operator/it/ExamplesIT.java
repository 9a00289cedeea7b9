package ca.helu.pallas.operator.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.api.AgentSpec;
import ca.helu.pallas.api.ManifestParser;
import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.api.PallasNames;
import ca.helu.pallas.api.PodSettingsSpec;
import ca.helu.pallas.operator.render.StartGate;
import ca.helu.pallas.operator.testing.Fixtures;
import ca.helu.pallas.operator.testing.KubeCluster;
import ca.helu.pallas.operator.testing.TestOperator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Every manifest in examples/ applied to a real API server: every object the operator owns. */
class ExamplesIT {
  private static final KubernetesClient K8S = KubeCluster.shared().client();

  static List<Path> examples() throws IOException {
    try (Stream<Path> files = Files.list(Path.of("..", "examples"))) {
      return files.filter(f -> f.toString().endsWith(".yaml")).sorted().toList();
    }
  }

  @ParameterizedTest
  @MethodSource("examples")
  void everyExampleBecomesAReadyFleet(Path example) throws Exception {
    TestOperator.shared();
    PallasDeployment d = ManifestParser.read(example);
    String ns = KubeCluster.shared().namespace("example");
    d.getMetadata().setNamespace(ns);
    // the Secrets the example's header says to create, with made-up values
    for (JsonNode ref : new YAMLMapper().readTree(example.toFile()).findValues("secretKeyRef")) {
      K8S.resource(
              new SecretBuilder()
                  .withNewMetadata()
                  .withName(ref.get("name").asText())
                  .withNamespace(ns)
                  .endMetadata()
                  .addToStringData(ref.get("key").asText(), "example-value")
                  .build())
          .serverSideApply();
    }
    PallasDeployment created = K8S.resource(d).create();
    String name = d.name();

    ConfigMap config =
        await()
            .atMost(Duration.ofSeconds(30))
            .until(
                () -> K8S.configMaps().inNamespace(ns).withName(PallasNames.configMap(name)).get(),
                c -> c != null);
    PallasDeployment rendered =
        ManifestParser.parse(config.getData().get(PallasNames.CONFIG_KEY), "configmap");
    assertThat(rendered.getSpec().effectiveAgents()).isEqualTo(d.getSpec().effectiveAgents());
    assertOwned(config, created);

    // agents start once the agents they call are available; mark each wave available in turn
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(() -> {
          for (AgentSpec agent : d.getSpec().effectiveAgents()) {
            Deployment dep = agentDeployment(ns, d, agent);
            if (dep != null && !StartGate.available(dep)) {
              KubeCluster.shared().markAvailable(dep);
            }
          }
          for (AgentSpec agent : d.getSpec().effectiveAgents()) {
            assertThat(agentDeployment(ns, d, agent))
                .as(agent.name())
                .matches(StartGate::available);
          }
        });
    String registryName = PallasNames.registryObject(name);
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(() -> {
          assertThat(K8S.apps().deployments().inNamespace(ns).withName(registryName).get())
              .isNotNull();
          assertThat(K8S.services().inNamespace(ns).withName(registryName).get()).isNotNull();
          assertThat(K8S.rbac().roleBindings().inNamespace(ns).withName(registryName).get())
              .isNotNull();
          for (AgentSpec agent : d.getSpec().effectiveAgents()) {
            String object = PallasNames.agentObject(name, agent.name());
            assertThat(K8S.services().inNamespace(ns).withName(object).get()).isNotNull();
          }
        });
    Deployment registry = K8S.apps().deployments().inNamespace(ns).withName(registryName).get();
    KubeCluster.shared().markAvailable(registry);

    for (AgentSpec agent : d.getSpec().effectiveAgents()) {
      String object = PallasNames.agentObject(name, agent.name());
      // its own pod, or its pod group's (examples/pod-groups.yaml)
      Deployment dep = agentDeployment(ns, d, agent);
      assertOwned(dep, created);
      assertThat(dep.getMetadata().getLabels())
          .containsAllEntriesOf(PallasNames.agentPodSelector(d, agent));
      assertThat(dep.getSpec().getTemplate().getMetadata().getAnnotations())
          .containsKey(PallasNames.CONFIG_HASH_ANNOTATION);
      Container c = dep.getSpec().getTemplate().getSpec().getContainers().get(0);
      assertThat(c.getImage()).isEqualTo(TestOperator.IMAGE);
      assertThat(c.getArgs())
          .containsSubsequence("serve", "-f", PallasNames.CONFIG_FILE, "--agent", agent.name());
      assertThat(c.getPorts())
          .extracting(p -> p.getContainerPort())
          .contains(d.getSpec().portOf(agent));
      assertThat(dep.getSpec().getReplicas()).isEqualTo(d.getSpec().replicasOf(agent));
      assertRestricted(dep.getSpec().getTemplate().getSpec());
      if (d.getSpec().auth() != null) {
        // its own identity, which the agents it calls know it by (examples/secured.yaml)
        String account = dep.getSpec().getTemplate().getSpec().getServiceAccountName();
        assertThat(account).isEqualTo(PallasNames.serviceAccountOf(d, agent));
        assertOwned(
            K8S.resources(ServiceAccount.class).inNamespace(ns).withName(account).get(), created);
      }
      // spec.pod under agents[].pod, field by field (examples/placement.yaml)
      PodSettingsSpec settings = d.getSpec().podOf(agent);
      if (settings.nodeSelector() != null) {
        assertThat(dep.getSpec().getTemplate().getSpec().getNodeSelector())
            .isEqualTo(settings.nodeSelector());
      }
      if (settings.labels() != null) {
        assertThat(dep.getSpec().getTemplate().getMetadata().getLabels())
            .containsAllEntriesOf(settings.labels());
      }
      if (settings.affinity() != null) {
        assertThat(dep.getSpec().getTemplate().getSpec().getAffinity())
            .isEqualTo(settings.affinity());
      }

      Service svc = K8S.services().inNamespace(ns).withName(object).get();
      assertOwned(svc, created);
      assertThat(svc.getSpec().getSelector()).isEqualTo(PallasNames.agentPodSelector(d, agent));
      assertThat(svc.getSpec().getPorts().get(0).getPort()).isEqualTo(d.getSpec().portOf(agent));
    }
    // one Deployment per pod: an agent's own, or its pod group's
    assertThat(
            K8S.apps()
                .deployments()
                .inNamespace(ns)
                .withLabel(PallasNames.LABEL_COMPONENT, PallasNames.COMPONENT_AGENT)
                .list()
                .getItems())
        .extracting(dep -> dep.getMetadata().getName())
        .containsExactlyInAnyOrderElementsOf(
            d.getSpec().effectiveAgents().stream()
                .map(a -> PallasNames.agentObject(name, d.getSpec().podNameOf(a)))
                .distinct()
                .toList());
    assertOwned(registry, created);
    assertRestricted(registry.getSpec().getTemplate().getSpec());
    assertThat(registry.getSpec().getTemplate().getSpec().getContainers().get(0).getArgs())
        .containsExactly(
            "registry", "--config-map", PallasNames.configMap(name), "--namespace", ns);
    assertOwned(K8S.services().inNamespace(ns).withName(registryName).get(), created);
    assertOwned(
        K8S.resources(ServiceAccount.class).inNamespace(ns).withName(registryName).get(), created);
    Role role = K8S.rbac().roles().inNamespace(ns).withName(registryName).get();
    assertOwned(role, created);
    assertThat(role.getRules())
        .singleElement()
        .satisfies(r -> {
          assertThat(r.getResources()).containsExactly("configmaps");
          assertThat(r.getResourceNames()).containsExactly(PallasNames.configMap(name));
          assertThat(r.getVerbs()).containsExactlyInAnyOrder("get", "list", "watch");
        });
    RoleBinding binding = K8S.rbac().roleBindings().inNamespace(ns).withName(registryName).get();
    assertOwned(binding, created);

    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(() -> {
          PallasDeployment now = K8S.resource(created).get();
          assertThat(now.getStatus()).isNotNull();
          assertThat(now.getStatus().observedGeneration())
              .isEqualTo(now.getMetadata().getGeneration());
          assertThat(now.getStatus().conditions())
              .anySatisfy(c -> {
                assertThat(c.getType()).isEqualTo("Ready");
                assertThat(c.getStatus()).isEqualTo("True");
                assertThat(c.getReason()).isEqualTo("AllAgentsReady");
              });
          int n = d.getSpec().effectiveAgents().size();
          assertThat(now.getStatus().agentsReady()).isEqualTo(n + "/" + n);
          assertThat(now.getStatus().registryUrl())
              .isEqualTo(
                  "http://"
                      + registryName
                      + "."
                      + ns
                      + ".svc:"
                      + d.getSpec().effectiveRegistry().effectivePort()
                      + "/.well-known/mcp/server.json");
        });

    // kubectl get pallas tells the story in one line
    int n = d.getSpec().effectiveAgents().size();
    List<String> table = KubeCluster.shared().kubectl("get", "pallas", "-n", ns).lines().toList();
    assertThat(table.get(0).split("\\s+"))
        .containsExactly("NAME", "READY", "AGENTS", "REGISTRY", "URL", "AGE");
    assertThat(table.get(1).split("\\s+"))
        .startsWith(name, "True", n + "/" + n, PallasNames.registryUrl(Fixtures.get(created)))
        .hasSize(5);
  }

  /** The Deployment of the pods that serve an agent: its own, or its pod group's. */
  private static Deployment agentDeployment(String ns, PallasDeployment d, AgentSpec agent) {
    return K8S.apps()
        .deployments()
        .inNamespace(ns)
        .withName(PallasNames.agentObject(d.name(), d.getSpec().podNameOf(agent)))
        .get();
  }

  static void assertOwned(HasMetadata object, PallasDeployment owner) {
    assertThat(object).isNotNull();
    assertThat(object.getMetadata().getOwnerReferences())
        .singleElement()
        .satisfies((OwnerReference ref) -> {
          assertThat(ref.getKind()).isEqualTo(PallasDeployment.KIND);
          assertThat(ref.getApiVersion()).isEqualTo(PallasDeployment.API_VERSION);
          assertThat(ref.getName()).isEqualTo(owner.getMetadata().getName());
          assertThat(ref.getUid()).isEqualTo(owner.getMetadata().getUid());
          assertThat(ref.getController()).isTrue();
        });
    assertThat(object.getMetadata().getLabels())
        .containsAllEntriesOf(PallasNames.instanceLabels(owner.getMetadata().getName()));
  }

  static void assertRestricted(PodSpec pod) {
    assertThat(pod.getSecurityContext().getRunAsNonRoot()).isTrue();
    assertThat(pod.getSecurityContext().getSeccompProfile().getType()).isEqualTo("RuntimeDefault");
    for (Container c : pod.getContainers()) {
      assertThat(c.getSecurityContext().getAllowPrivilegeEscalation()).isFalse();
      assertThat(c.getSecurityContext().getReadOnlyRootFilesystem()).isTrue();
      assertThat(c.getSecurityContext().getCapabilities().getDrop()).containsExactly("ALL");
      assertThat(c.getVolumeMounts())
          .anySatisfy(m -> assertThat(m.getMountPath()).isEqualTo("/tmp"));
      assertThat(c.getReadinessProbe().getHttpGet().getPath()).isEqualTo("/readyz");
      assertThat(c.getLivenessProbe().getHttpGet().getPath()).isEqualTo("/livez");
    }
  }
}
