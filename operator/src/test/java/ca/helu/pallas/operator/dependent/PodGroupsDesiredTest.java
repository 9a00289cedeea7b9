package ca.helu.pallas.operator.dependent;

import static org.assertj.core.api.Assertions.assertThat;

import ca.helu.pallas.api.ManifestParser;
import ca.helu.pallas.api.PallasNames;
import ca.helu.pallas.operator.render.FleetRenderer;
import ca.helu.pallas.operator.render.RenderedFleet;
import ca.helu.pallas.operator.render.StartGate;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Agents that share a pod (issue 21 §4, docs/operator.md, "Agents sharing a pod"): one Deployment
 * per pod group, one Service per agent selecting its group's pods on the agent's own port, the
 * union of the agents' keys, one probe port for the pod, a budget per group of several pods, and a
 * hash that rolls the group when any of its agents changes.
 */
class PodGroupsDesiredTest {
  static final String SPEC =
      """
      apiVersion: pallas.helu.ca/v1alpha1
      kind: PallasDeployment
      metadata: {name: fleet, namespace: ai, uid: u-1}
      spec:
        registry: {port: 23030}
        defaultModel: passthrough
        providers: {openai: {apiKey: {secretKeyRef: {name: llm, key: k}}}}
        mcpServers: [{name: tools, url: "http://t/mcp",
                      headers: [{name: A, valueFrom: {secretKeyRef: {name: tools, key: t}}}]}]
        pod: {labels: {team: search}, nodeSelector: {pool: agents}}
        podGroups:
          - {name: small, replicas: 2, resources: {limits: {memory: 384Mi}},
             pod: {labels: {team: small}}}
          - {name: big}
        defaultPodGroup: small
        agents:
          - {name: writer, model: openai.x, instruction: writes}
          - {name: reader, servers: [tools], port: 8086}
          - {name: critic, podGroup: big, dependsOn: [writer], sessionAffinity: ClientIP}
      """;

  static RenderedFleet render(String spec) {
    return FleetRenderer.render(
        ManifestParser.parse(spec, "t"), name -> Optional.of(Map.of("k", "d1", "t", "d2")));
  }

  static final RenderedFleet FLEET = render(SPEC);

  @Test
  void aGroupIsOneDeploymentWhoseProcessServesEachOfItsAgents() {
    assertThat(FLEET.pods().keySet()).containsExactly("small", "big");
    Deployment small =
        AgentDeploymentsDependentResource.desired(
            FLEET, FLEET.pods().get("small"), DesiredTest.CONFIG);
    assertThat(small.getMetadata().getName()).isEqualTo("fleet-small");
    assertThat(small.getMetadata().getLabels())
        .containsEntry(PallasNames.LABEL_POD_GROUP, "small")
        .doesNotContainKey(PallasNames.LABEL_AGENT);
    assertThat(small.getSpec().getReplicas()).isEqualTo(2);
    assertThat(small.getSpec().getSelector().getMatchLabels())
        .isEqualTo(PallasNames.podGroupSelector("fleet", "small"));
    Container c = small.getSpec().getTemplate().getSpec().getContainers().get(0);
    assertThat(c.getArgs())
        .containsExactly(
            "serve",
            "-f",
            "/etc/pallas/deployment.yaml",
            "--agent",
            "writer",
            "--agent",
            "reader",
            "--cluster",
            "--drain-timeout",
            "30",
            "--probe-port",
            // 8086 is the reader's own port
            "8087");
    assertThat(c.getPorts())
        .extracting(p -> p.getName() + "=" + p.getContainerPort())
        .containsExactly("mcp-23031=23031", "mcp-8086=8086", "probes=8087");
    assertThat(c.getReadinessProbe().getHttpGet().getPort().getStrVal()).isEqualTo("probes");
    // the keys of both agents, each once: the writer's provider, the reader's server
    assertThat(c.getEnv())
        .extracting(EnvVar::getName)
        .containsExactly("PALLAS_SECRET_llm__k", "PALLAS_SECRET_tools__t");
    assertThat(c.getResources().getLimits()).containsOnlyKeys("memory");
    assertThat(c.getResources().getLimits().get("memory")).hasToString("384Mi");
    // the group's pod settings over the fleet's, field by field
    var template = small.getSpec().getTemplate();
    assertThat(template.getMetadata().getLabels()).containsEntry("team", "small");
    assertThat(template.getSpec().getNodeSelector()).containsEntry("pool", "agents");
    assertThat(template.getSpec().getTopologySpreadConstraints().get(0).getLabelSelector())
        .satisfies(s ->
            assertThat(s.getMatchLabels())
                .isEqualTo(PallasNames.podGroupSelector("fleet", "small")));

    Deployment big =
        AgentDeploymentsDependentResource.desired(
            FLEET, FLEET.pods().get("big"), DesiredTest.CONFIG);
    Container critic = big.getSpec().getTemplate().getSpec().getContainers().get(0);
    assertThat(critic.getArgs()).containsSequence("--agent", "critic", "--cluster");
    assertThat(critic.getArgs()).containsSequence("--probe-port", "8086");
    assertThat(critic.getEnv()).isEmpty();
    assertThat(critic.getResources().getRequests()).containsKeys("cpu", "memory");
  }

  @Test
  void eachAgentKeepsItsServiceOnItsOwnPortSelectingItsGroupsPods() {
    Service writer = AgentServicesDependentResource.desired(FLEET, FLEET.agents().get("writer"));
    assertThat(writer.getMetadata().getName()).isEqualTo("fleet-writer");
    assertThat(writer.getSpec().getSelector())
        .isEqualTo(PallasNames.podGroupSelector("fleet", "small"));
    assertThat(writer.getSpec().getPorts())
        .singleElement()
        .satisfies(p -> {
          assertThat(p.getName()).isEqualTo("http");
          assertThat(p.getPort()).isEqualTo(23031);
          assertThat(p.getTargetPort().getStrVal()).isEqualTo("mcp-23031");
        });
    Service critic = AgentServicesDependentResource.desired(FLEET, FLEET.agents().get("critic"));
    assertThat(critic.getSpec().getSelector())
        .isEqualTo(PallasNames.podGroupSelector("fleet", "big"));
    assertThat(critic.getSpec().getSessionAffinity()).isEqualTo("ClientIP");
  }

  @Test
  void aGroupOfSeveralPodsHasOneBudgetAndTheProbePortsAreOpen() {
    assertThat(AgentDisruptionBudgetsDependentResource.desired(FLEET).values())
        .singleElement()
        .satisfies(b -> {
          assertThat(b.getMetadata().getName()).isEqualTo("fleet-small");
          assertThat(b.getSpec().getSelector().getMatchLabels())
              .isEqualTo(PallasNames.podGroupSelector("fleet", "small"));
        });
    var rules =
        NetworkPolicyDependentResource.desired(FLEET, "pallas-system").getSpec().getIngress();
    assertThat(rules.get(4).getPorts())
        .extracting(p -> p.getPort().getIntVal())
        .containsExactly(8087, 8086);
  }

  @Test
  void aGroupWaitsForWhatItsAgentsNeedInOtherPods() {
    StartGate before = StartGate.of(FLEET, Map.of());
    assertThat(before.startable()).containsExactlyInAnyOrder("writer", "reader");
    assertThat(before.waitingFor()).isEqualTo(Map.of("critic", java.util.List.of("writer")));
    Deployment available =
        new DeploymentBuilder()
            .withNewSpec()
            .withReplicas(2)
            .endSpec()
            .withNewStatus()
            .withReadyReplicas(1)
            .addNewCondition()
            .withType("Available")
            .withStatus("True")
            .endCondition()
            .endStatus()
            .build();
    // the writer's pod is the small group's: both of its agents map to it
    StartGate after = StartGate.of(FLEET, Map.of("writer", available, "reader", available));
    assertThat(after.startable()).containsExactlyInAnyOrder("writer", "reader", "critic");
    assertThat(after.waitingFor()).isEmpty();
  }

  @Test
  void anyChangeToOneOfItsAgentsRollsTheGroupAndNothingElse() {
    String small = FLEET.pods().get("small").configHash();
    String big = FLEET.pods().get("big").configHash();
    assertThat(render(SPEC).pods().get("small").configHash()).isEqualTo(small);

    RenderedFleet readerChanged =
        render(SPEC.replace("{name: reader, servers", "{name: reader, instruction: new, servers"));
    assertThat(readerChanged.pods().get("small").configHash()).isNotEqualTo(small);
    assertThat(readerChanged.pods().get("big").configHash()).isEqualTo(big);

    RenderedFleet scaled = render(SPEC.replace("replicas: 2", "replicas: 3"));
    assertThat(scaled.pods().get("small").configHash()).isEqualTo(small);
  }
}
