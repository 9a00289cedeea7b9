package ca.helu.pallas.operator.it;

import static ca.helu.pallas.operator.testing.Fixtures.awaitAndMarkAvailable;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.api.PallasNames;
import ca.helu.pallas.api.validation.DeploymentValidator;
import ca.helu.pallas.operator.testing.Fixtures;
import ca.helu.pallas.operator.testing.KubeCluster;
import ca.helu.pallas.operator.testing.TestOperator;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.scheduling.v1.PriorityClassBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * spec.pod and agents[].pod (issue 21 §1; docs/operator.md, "Pods where you want them"): the
 * rendered Deployments carry the user's scheduling, labels, env and volumes, an agent's own field
 * replaces the fleet's, the registry takes the fleet's, the API server admits the pods (a
 * server-side dry-run create, which checks the PriorityClass and the ServiceAccount exist), a
 * change rolls the pods, and a value that would break the operator's pods is refused by the CRD and
 * by the local validator with the same message.
 */
class PodSettingsIT {
  private static final KubernetesClient K8S = KubeCluster.shared().client();
  private static final String PRIORITY = "pallas-pod-settings-it";

  private static final String SPEC =
      """
        defaultModel: passthrough
        pod:
          nodeSelector: {pool: agents}
          tolerations: [{key: dedicated, operator: Equal, value: agents, effect: NoSchedule}]
          affinity:
            nodeAffinity:
              requiredDuringSchedulingIgnoredDuringExecution:
                nodeSelectorTerms:
                  - matchExpressions: [{key: kubernetes.io/arch, operator: In, values: [amd64]}]
          topologySpreadConstraints:
            - maxSkew: 2
              topologyKey: topology.kubernetes.io/zone
              whenUnsatisfiable: DoNotSchedule
              labelSelector: {matchLabels: {team: search}}
          priorityClassName: %s
          labels: {team: search}
          annotations: {example.com/owner: search-team}
          env:
            - {name: HTTPS_PROXY, value: "http://proxy:3128"}
            - name: REGION
              valueFrom: {configMapKeyRef: {name: site, key: region}}
            - name: VENDOR_TOKEN
              valueFrom: {secretKeyRef: {name: vendor, key: token}}
          envFrom: [{configMapRef: {name: site}, prefix: SITE_}]
          volumes: [{name: ca, configMap: {name: site}}]
          volumeMounts: [{name: ca, mountPath: /etc/ssl/site, readOnly: true}]
          serviceAccountName: agents
        agents:
          - {name: a}
          - name: b
            pod:
              nodeSelector: {pool: gpu}
              env: [{name: MODE, value: b}]
      """
          .formatted(PRIORITY);

  @Test
  void renderedPodsCarryTheSettingsAnAgentsOwnWinAndAChangeRolls() {
    TestOperator.shared();
    String ns = KubeCluster.shared().namespace("podsettings");
    K8S.resource(
            new PriorityClassBuilder()
                .withNewMetadata()
                .withName(PRIORITY)
                .endMetadata()
                .withValue(1000)
                .build())
        .serverSideApply();
    K8S.resource(
            new ServiceAccountBuilder()
                .withNewMetadata()
                .withName("agents")
                .withNamespace(ns)
                .endMetadata()
                .build())
        .create();
    K8S.resource(
            new ConfigMapBuilder()
                .withNewMetadata()
                .withName("site")
                .withNamespace(ns)
                .endMetadata()
                .withData(Map.of("region", "north"))
                .build())
        .create();
    Fixtures.secret(ns, "vendor", Map.of("token", "tok-vendor-5e1f"));
    PallasDeployment d = Fixtures.create("placed", ns, SPEC);
    Deployment a = awaitAndMarkAvailable(d, "a");
    Deployment b = awaitAndMarkAvailable(d, "b");
    Deployment registry = Fixtures.awaitRegistryAndMarkAvailable(d);

    PodSpec podA = a.getSpec().getTemplate().getSpec();
    assertThat(podA.getNodeSelector()).containsExactlyEntriesOf(Map.of("pool", "agents"));
    assertThat(podA.getTolerations())
        .singleElement()
        .satisfies(t -> {
          assertThat(t.getKey()).isEqualTo("dedicated");
          assertThat(t.getEffect()).isEqualTo("NoSchedule");
        });
    assertThat(
            podA.getAffinity()
                .getNodeAffinity()
                .getRequiredDuringSchedulingIgnoredDuringExecution()
                .getNodeSelectorTerms())
        .singleElement()
        .satisfies(term ->
            assertThat(term.getMatchExpressions().get(0).getValues()).containsExactly("amd64"));
    // the user's spread replaces the operator's default one
    assertThat(podA.getTopologySpreadConstraints())
        .singleElement()
        .satisfies(c -> {
          assertThat(c.getMaxSkew()).isEqualTo(2);
          assertThat(c.getWhenUnsatisfiable()).isEqualTo("DoNotSchedule");
        });
    assertThat(podA.getPriorityClassName()).isEqualTo(PRIORITY);
    assertThat(podA.getServiceAccountName()).isEqualTo("agents");
    assertThat(a.getSpec().getTemplate().getMetadata().getLabels())
        .containsEntry("team", "search")
        .containsAllEntriesOf(PallasNames.agentLabels("placed", "a"));
    assertThat(a.getSpec().getTemplate().getMetadata().getAnnotations())
        .containsEntry("example.com/owner", "search-team")
        .containsKey(PallasNames.CONFIG_HASH_ANNOTATION);
    Container agentA = podA.getContainers().get(0);
    assertThat(agentA.getEnv())
        .extracting(EnvVar::getName)
        .contains("HTTPS_PROXY", "REGION", "VENDOR_TOKEN");
    EnvVar token = env(agentA, "VENDOR_TOKEN");
    assertThat(token.getValue()).isNull();
    assertThat(token.getValueFrom().getSecretKeyRef().getName()).isEqualTo("vendor");
    assertThat(agentA.getEnvFrom())
        .singleElement()
        .satisfies(e -> {
          assertThat(e.getPrefix()).isEqualTo("SITE_");
          assertThat(e.getConfigMapRef().getName()).isEqualTo("site");
        });
    // the user's volume beside the operator's own, which stay
    assertThat(podA.getVolumes())
        .extracting(Volume::getName)
        .contains(PallasNames.CONFIG_VOLUME, PallasNames.TMP_VOLUME, "ca");
    assertThat(agentA.getVolumeMounts())
        .extracting(VolumeMount::getMountPath)
        .contains(PallasNames.CONFIG_DIR, PallasNames.TMP_DIR, "/etc/ssl/site");
    // no secret value is copied anywhere the operator writes
    assertThat(K8S.apps().deployments().inNamespace(ns).list().getItems().toString())
        .doesNotContain("tok-vendor-5e1f");

    // agent b's own nodeSelector and env replace the fleet's whole; the rest is the fleet's
    PodSpec podB = b.getSpec().getTemplate().getSpec();
    assertThat(podB.getNodeSelector()).containsExactlyEntriesOf(Map.of("pool", "gpu"));
    assertThat(podB.getContainers().get(0).getEnv())
        .extracting(EnvVar::getName)
        .contains("MODE")
        .doesNotContain("HTTPS_PROXY", "REGION");
    assertThat(podB.getPriorityClassName()).isEqualTo(PRIORITY);
    assertThat(podB.getTolerations()).hasSize(1);

    // the registry takes the fleet-wide block but keeps the ServiceAccount its Role is bound to
    PodSpec podRegistry = registry.getSpec().getTemplate().getSpec();
    assertThat(podRegistry.getNodeSelector()).containsExactlyEntriesOf(Map.of("pool", "agents"));
    assertThat(podRegistry.getPriorityClassName()).isEqualTo(PRIORITY);
    assertThat(podRegistry.getServiceAccountName()).isEqualTo(PallasNames.registryObject("placed"));
    assertThat(env(podRegistry.getContainers().get(0), "HTTPS_PROXY").getValue())
        .isEqualTo("http://proxy:3128");

    // the API server admits every rendered pod (Priority admission resolves the PriorityClass)
    for (Deployment deployment : List.of(a, b, registry)) {
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
      assertThat(admitted.getSpec().getPriority()).isEqualTo(1000);
    }

    // a fleet-wide change rolls every agent's pods: their pod templates change
    Fixtures.replaceSpec(d, SPEC.replace("{pool: agents}", "{pool: agents-2}"));
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() ->
            Fixtures.agentDeployment(d, "a")
                .getSpec()
                .getTemplate()
                .getSpec()
                .getNodeSelector()
                .equals(Map.of("pool", "agents-2")));
    assertThat(Fixtures.agentDeployment(d, "a").getMetadata().getGeneration())
        .isGreaterThan(a.getMetadata().getGeneration());
    // b's own nodeSelector still wins
    assertThat(Fixtures.agentDeployment(d, "b").getSpec().getTemplate().getSpec().getNodeSelector())
        .containsExactlyEntriesOf(Map.of("pool", "gpu"));
  }

  /**
   * The API server defaults fields inside the user's objects (a configMap volume's defaultMode, a
   * toleration's operator): the operator must still see its Deployments as matching and write
   * nothing once converged.
   */
  @Test
  void theOperatorConvergesOnTheSettingsAndWritesNothingMore() {
    TestOperator.shared();
    String ns = KubeCluster.shared().namespace("podsteady");
    K8S.resource(
            new PriorityClassBuilder()
                .withNewMetadata()
                .withName(PRIORITY)
                .endMetadata()
                .withValue(1000)
                .build())
        .serverSideApply();
    PallasDeployment d = Fixtures.create("placed", ns, SPEC);
    awaitAndMarkAvailable(d, "a");
    awaitAndMarkAvailable(d, "b");
    Fixtures.awaitRegistryAndMarkAvailable(d);
    Fixtures.awaitCondition(d, "Progressing", "Converged");
    Map<String, String> before = Fixtures.ownedVersions(d);
    await()
        .during(Duration.ofSeconds(10))
        .atMost(Duration.ofSeconds(15))
        .pollInterval(Duration.ofSeconds(1))
        .untilAsserted(() -> assertThat(Fixtures.ownedVersions(d)).isEqualTo(before));
    assertThat(before).containsKeys("Deployment/placed-a", "Deployment/placed-registry");
  }

  static Stream<Arguments> refused() {
    return Stream.of(
        Arguments.of(
            "pod: {labels: {app.kubernetes.io/instance: other}}",
            "spec.pod.labels",
            "may not set app.kubernetes.io/instance: the operator selects its pods by this label"),
        Arguments.of(
            "pod: {annotations: {pallas.helu.ca/config-hash: x}}",
            "spec.pod.annotations",
            "may not set pallas.helu.ca/config-hash: the operator sets it"),
        Arguments.of(
            "pod: {env: [{name: PALLAS_STORE_URL, value: x}]}",
            "spec.pod.env[0].name",
            "may not set PALLAS_STORE_URL: names starting with PALLAS_ belong to the runtime"),
        Arguments.of(
            "pod: {envFrom: [{prefix: PALLAS_X, configMapRef: {name: c}}]}",
            "spec.pod.envFrom[0].prefix",
            "may not use the prefix PALLAS_X"),
        Arguments.of(
            "pod: {volumes: [{name: tmp, emptyDir: {}}]}",
            "spec.pod.volumes",
            "may not name a volume tmp: config, tmp, static-tokens and identity are volumes of the"
                + " operator"),
        Arguments.of(
            "pod: {volumeMounts: [{name: v, mountPath: /etc/pallas/extra}]}",
            "spec.pod.volumeMounts[0].mountPath",
            "may not mount at /etc/pallas/extra: it collides with a mount of the operator"),
        Arguments.of(
            "pod: {volumeMounts: [{name: v, mountPath: /tmp}]}",
            "spec.pod.volumeMounts[0].mountPath",
            "may not mount at /tmp: it collides"),
        Arguments.of(
            "pod: {volumeMounts: [{name: v, mountPath: /var/run/}]}",
            "spec.pod.volumeMounts[0].mountPath",
            "may not mount at /var/run/: it collides"),
        Arguments.of(
            "agents: [{name: a, pod: {env: [{name: PALLAS_LOG_LEVEL, value: DEBUG}]}}]",
            "spec.agents[0].pod.env[0].name",
            "may not set PALLAS_LOG_LEVEL: names starting with PALLAS_ belong to the runtime"));
  }

  @ParameterizedTest(name = "{1}")
  @MethodSource("refused")
  void theApiServerAndTheValidatorRefuseWithTheSameMessage(
      String yaml, String field, String message) {
    String spec =
        yaml.startsWith("agents:")
            ? "  defaultModel: passthrough\n  " + yaml + "\n"
            : "  defaultModel: passthrough\n  " + yaml + "\n  agents: [{name: a}]\n";
    String ns = KubeCluster.shared().namespace("podrules");
    PallasDeployment d = Fixtures.parse("fleet", ns, spec);
    assertThatThrownBy(() -> K8S.resource(d).create())
        .isInstanceOf(KubernetesClientException.class)
        .satisfies(e -> assertThat(((KubernetesClientException) e).getCode()).isEqualTo(422))
        .message()
        .contains(field, message);
    assertThat(DeploymentValidator.validate(d))
        .anySatisfy(problem -> assertThat(problem).startsWith(field + ": ").contains(message));
  }

  @Test
  void aMountInsideTmpIsAllowed() {
    String ns = KubeCluster.shared().namespace("podrules");
    PallasDeployment d =
        Fixtures.parse(
            "fleet",
            ns,
            "  defaultModel: passthrough\n"
                + "  pod: {volumes: [{name: cache, emptyDir: {}}], volumeMounts: [{name: cache,"
                + " mountPath: /tmp/cache}]}\n"
                + "  agents: [{name: a}]\n");
    assertThat(DeploymentValidator.validate(d)).isEmpty();
    assertThat(K8S.resource(d).dryRun().create().getSpec().pod().volumeMounts()).hasSize(1);
  }

  private static EnvVar env(Container container, String name) {
    return container.getEnv().stream()
        .filter(e -> e.getName().equals(name))
        .findFirst()
        .orElseThrow();
  }
}
