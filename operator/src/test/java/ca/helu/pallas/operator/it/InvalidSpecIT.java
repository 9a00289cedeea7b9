package ca.helu.pallas.operator.it;

import static ca.helu.pallas.operator.testing.Fixtures.awaitAndMarkAvailable;
import static ca.helu.pallas.operator.testing.Fixtures.awaitCondition;
import static ca.helu.pallas.operator.testing.Fixtures.ownedVersions;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.api.PallasNames;
import ca.helu.pallas.api.SecretValue.SecretKeyRef;
import ca.helu.pallas.api.SecretVariables;
import ca.helu.pallas.operator.testing.Fixtures;
import ca.helu.pallas.operator.testing.KubeCluster;
import ca.helu.pallas.operator.testing.TestOperator;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What CEL cannot check (a dependency cycle, a missing Secret or key) leaves every running object
 * as it was and says why in the status and a Warning event; fixing it applies the spec.
 */
class InvalidSpecIT {
  private static final KubernetesClient K8S = KubeCluster.shared().client();
  private static final String VALID =
      """
        defaultModel: passthrough
        agents:
          - {name: a}
          - {name: b, instruction: first}
      """;

  @BeforeAll
  static void operator() {
    TestOperator.shared();
  }

  private static PallasDeployment running(String ns) {
    PallasDeployment d = Fixtures.create("fleet", ns, VALID);
    awaitAndMarkAvailable(d, "a");
    awaitAndMarkAvailable(d, "b");
    Fixtures.awaitRegistryAndMarkAvailable(d);
    awaitCondition(d, "Ready", "AllAgentsReady");
    return d;
  }

  @Test
  void aDependencyCycleChangesNothingAndSaysWhy() {
    String ns = KubeCluster.shared().namespace("cycle");
    PallasDeployment d = running(ns);
    Map<String, String> before = ownedVersions(d);

    Fixtures.replaceSpec(
        d,
        """
          defaultModel: passthrough
          agents:
            - {name: a, dependsOn: [b]}
            - {name: b, instruction: second, servers: [a]}
        """);

    Condition ready = awaitCondition(d, "Ready", "InvalidSpec");
    assertThat(ready.getStatus()).isEqualTo("False");
    assertThat(ready.getMessage()).contains("spec.agents: dependency cycle a -> b -> a");
    assertThat(awaitCondition(d, "Degraded", "InvalidSpec").getStatus()).isEqualTo("True");
    assertThat(ownedVersions(d)).as("nothing running was touched").isEqualTo(before);
    assertThat(warnings(ns)).anySatisfy(e -> assertThat(e.getReason()).isEqualTo("InvalidSpec"));
    assertThat(Fixtures.get(d).getStatus().observedGeneration())
        .isEqualTo(Fixtures.get(d).getMetadata().getGeneration());
  }

  @Test
  void aMissingSecretOrKeyChangesNothingUntilItExists() {
    String ns = KubeCluster.shared().namespace("secret");
    PallasDeployment d = running(ns);
    Map<String, String> before = ownedVersions(d);
    String withKey =
        """
          defaultModel: passthrough
          providers:
            openai: {baseUrl: "http://llm:8080/v1", apiKey: {secretKeyRef: {name: llm, key: token}}}
          agents:
            - {name: a}
            - {name: b, instruction: first, model: openai.qwen3}
        """;
    Fixtures.replaceSpec(d, withKey);

    Condition ready = awaitCondition(d, "Ready", "SecretMissing");
    assertThat(ready.getMessage())
        .contains("spec.providers.openai.apiKey: Secret 'llm' does not exist");
    assertThat(ownedVersions(d)).isEqualTo(before);

    Fixtures.secret(ns, "llm", Map.of("other", "x"));
    ready =
        await()
            .atMost(Duration.ofSeconds(30))
            .until(
                () -> Fixtures.condition(d, "Ready").orElseThrow(),
                c -> c.getMessage().contains("has no key 'token'"));
    assertThat(ready.getReason()).isEqualTo("SecretMissing");
    assertThat(ownedVersions(d)).isEqualTo(before);
    assertThat(warnings(ns))
        .filteredOn(e -> e.getReason().equals("SecretMissing"))
        .hasSizeGreaterThanOrEqualTo(2)
        .allSatisfy(e -> assertThat(e.getMessage()).doesNotContain("\"x\""));

    K8S.secrets()
        .inNamespace(ns)
        .withName("llm")
        .edit(s -> {
          s.setStringData(Map.of("token", "sk-test"));
          return s;
        });
    String variable = SecretVariables.nameFor(new SecretKeyRef("llm", "token"));
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(() ->
            assertThat(
                    Fixtures.agentDeployment(d, "b")
                        .getSpec()
                        .getTemplate()
                        .getSpec()
                        .getContainers()
                        .get(0)
                        .getEnv())
                .anySatisfy(env -> {
                  assertThat(env.getName()).isEqualTo(variable);
                  assertThat(env.getValue()).isNull();
                  assertThat(env.getValueFrom().getSecretKeyRef().getName()).isEqualTo("llm");
                  assertThat(env.getValueFrom().getSecretKeyRef().getKey()).isEqualTo("token");
                }));
    String config =
        K8S.configMaps()
            .inNamespace(ns)
            .withName(PallasNames.configMap("fleet"))
            .get()
            .getData()
            .get(PallasNames.CONFIG_KEY);
    assertThat(config).contains("secretKeyRef").doesNotContain("sk-test");
  }

  @Test
  void anObjectTheApiServerRefusesIsReportedWithItsMessageAndRetried() {
    String ns = KubeCluster.shared().namespace("refused", Map.of("pallas-test", "refuse-services"));
    // an admission policy, as a cluster administrator might have, refuses every Service here
    String policy =
        """
        apiVersion: admissionregistration.k8s.io/v1
        kind: ValidatingAdmissionPolicy
        metadata: {name: no-services-%1$s}
        spec:
          failurePolicy: Fail
          matchConstraints:
            resourceRules:
              - {apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [services]}
          validations:
            - {expression: "false", message: "Services are not allowed in this namespace"}
        ---
        apiVersion: admissionregistration.k8s.io/v1
        kind: ValidatingAdmissionPolicyBinding
        metadata: {name: no-services-%1$s}
        spec:
          policyName: no-services-%1$s
          validationActions: [Deny]
          matchResources:
            namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: %1$s}}
        """
            .formatted(ns);
    var objects =
        K8S.load(new ByteArrayInputStream(policy.getBytes(StandardCharsets.UTF_8))).items();
    objects.forEach(o -> K8S.resource(o).create());
    // the policy takes effect once the API server has loaded it
    await().atMost(Duration.ofSeconds(30)).until(() -> refusesServices(ns));
    PallasDeployment d = Fixtures.create("fleet", ns, VALID);
    Condition ready = awaitCondition(d, "Ready", "ReconcileFailed");
    assertThat(ready.getMessage())
        .startsWith("cannot apply the spec: ")
        .contains("Services are not allowed in this namespace")
        .doesNotContain("\tat ", "Exception");
    assertThat(awaitCondition(d, "Degraded", "ReconcileFailed").getStatus()).isEqualTo("True");
    assertThat(warnings(ns))
        .anySatisfy(e -> assertThat(e.getReason()).isEqualTo("ReconcileFailed"));

    objects.forEach(o -> K8S.resource(o).delete());
    awaitAndMarkAvailable(d, "a");
    awaitAndMarkAvailable(d, "b");
    Fixtures.awaitRegistryAndMarkAvailable(d);
    awaitCondition(d, "Ready", "AllAgentsReady");
  }

  private static boolean refusesServices(String ns) {
    try {
      K8S.resource(
              new ServiceBuilder()
                  .withNewMetadata()
                  .withName("probe")
                  .withNamespace(ns)
                  .endMetadata()
                  .withNewSpec()
                  .addNewPort()
                  .withPort(80)
                  .endPort()
                  .endSpec()
                  .build())
          .dryRun()
          .create();
      return false;
    } catch (KubernetesClientException e) {
      return e.getMessage().contains("Services are not allowed");
    }
  }

  private static List<Event> warnings(String ns) {
    return K8S.v1().events().inNamespace(ns).list().getItems().stream()
        .filter(e -> "Warning".equals(e.getType()))
        .filter(e -> "PallasDeployment".equals(e.getInvolvedObject().getKind()))
        .toList();
  }
}
