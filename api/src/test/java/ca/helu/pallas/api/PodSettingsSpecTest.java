package ca.helu.pallas.api;

import static org.assertj.core.api.Assertions.assertThat;

import ca.helu.pallas.api.validation.DeploymentValidator;
import com.fasterxml.jackson.core.JsonProcessingException;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * spec.pod and agents[].pod as the manifest reads them (issue 21 §1): the merge rule, the mount
 * paths that collide with the operator's, and a round trip through the rendered manifest the pods
 * read. The CRD's side of the rules is PodSettingsIT (operator module, on a real API server).
 */
class PodSettingsSpecTest {
  private static final String FLEET =
      """
      apiVersion: pallas.helu.ca/v1alpha1
      kind: PallasDeployment
      metadata: {name: fleet}
      spec:
        defaultModel: passthrough
        pod:
          nodeSelector: {pool: agents}
          priorityClassName: high
          labels: {team: search}
          env: [{name: A, value: "1"}, {name: B, valueFrom: {secretKeyRef: {name: s, key: k}}}]
          volumeMounts: [{name: ca, mountPath: /etc/ssl/site, readOnly: true}]
          securityContext: {runAsUser: 1000650000, fsGroup: 1000650000}
        agents:
          - {name: a}
          - name: b
            pod: {nodeSelector: {pool: gpu}, labels: {team: vision}}
      """;

  @Test
  void anAgentsOwnFieldReplacesTheFleetsWholeAndTheRestIsTheFleets() {
    PallasDeploymentSpec spec = ManifestParser.parse(FLEET, "fleet.yaml").getSpec();
    PodSettingsSpec a = spec.podOf(spec.agent("a").orElseThrow());
    PodSettingsSpec b = spec.podOf(spec.agent("b").orElseThrow());
    assertThat(a).isEqualTo(spec.pod());
    assertThat(b.nodeSelector()).containsExactlyEntriesOf(Map.of("pool", "gpu"));
    // a map is replaced, not merged: b has no team=search
    assertThat(b.labels()).containsExactlyEntriesOf(Map.of("team", "vision"));
    assertThat(b.priorityClassName()).isEqualTo("high");
    assertThat(b.env()).isEqualTo(spec.pod().env());
    assertThat(b.securityContext().runAsUser()).isEqualTo(1000650000L);
    assertThat(spec.effectivePod()).isEqualTo(spec.pod());
  }

  @Test
  void theRenderedManifestCarriesThePodSettingsBackUnchanged() throws JsonProcessingException {
    PallasDeployment d = ManifestParser.parse(FLEET, "fleet.yaml");
    String rendered = ManifestParser.yamlMapper().writeValueAsString(d);
    PallasDeployment read = ManifestParser.parse(rendered, "rendered.yaml");
    assertThat(read.getSpec().pod()).isEqualTo(d.getSpec().pod());
    assertThat(read.getSpec().pod().env().get(1).toEnvVar().getValueFrom().getSecretKeyRef())
        .satisfies(ref -> {
          assertThat(ref.getName()).isEqualTo("s");
          assertThat(ref.getKey()).isEqualTo("k");
        });
    assertThat(DeploymentValidator.validate(read)).isEmpty();
  }

  @Test
  void mountsAtInsideOrAboveTheOperatorsOwnCollideAndInsideTmpDoesNot() {
    assertThat(PodSettingsSpec.mountCollides("/etc/pallas")).isTrue();
    assertThat(PodSettingsSpec.mountCollides("/etc/pallas/")).isTrue();
    assertThat(PodSettingsSpec.mountCollides("/etc/pallas/x")).isTrue();
    assertThat(PodSettingsSpec.mountCollides("/etc")).isTrue();
    assertThat(PodSettingsSpec.mountCollides("/")).isTrue();
    assertThat(PodSettingsSpec.mountCollides("/tmp")).isTrue();
    assertThat(PodSettingsSpec.mountCollides("/var/run/pallas/static-tokens/a")).isTrue();
    assertThat(PodSettingsSpec.mountCollides("/var")).isTrue();
    assertThat(PodSettingsSpec.mountCollides("/tmp/cache")).isFalse();
    assertThat(PodSettingsSpec.mountCollides("/etc/pallas-extra")).isFalse();
    assertThat(PodSettingsSpec.mountCollides("/etc/ssl/site")).isFalse();
    assertThat(PodSettingsSpec.mountCollides("/data")).isFalse();
  }

  @Test
  void theValidatorRefusesRootAndIdsKubernetesRefuses() throws JsonProcessingException {
    PallasDeployment d =
        ManifestParser.yamlMapper()
            .readValue(
                FLEET.replace(
                    "securityContext: {runAsUser: 1000650000, fsGroup: 1000650000}",
                    "securityContext: {runAsUser: 0, runAsGroup: -1, fsGroup: 2147483648}"),
                PallasDeployment.class);
    assertThat(DeploymentValidator.validate(d))
        .containsExactly(
            "spec.pod.securityContext.runAsUser: 0 must be between 1 and 2147483647",
            "spec.pod.securityContext.runAsGroup: -1 must be between 0 and 2147483647",
            "spec.pod.securityContext.fsGroup: 2147483648 must be between 0 and 2147483647");
  }

  @Test
  void theValidatorNamesEveryOffendingEntryByItsIndex() throws JsonProcessingException {
    PallasDeployment d =
        ManifestParser.yamlMapper()
            .readValue(
                FLEET.replace(
                    "env: [{name: A, value: \"1\"}",
                    "env: [{name: PALLAS_A, value: \"1\"}, {name: PALLAS_B, value: \"2\"}"),
                PallasDeployment.class);
    assertThat(DeploymentValidator.validate(d))
        .containsExactly(
            "spec.pod.env[0].name: may not set PALLAS_A: names starting with PALLAS_ belong to"
                + " the runtime",
            "spec.pod.env[1].name: may not set PALLAS_B: names starting with PALLAS_ belong to"
                + " the runtime");
  }
}
