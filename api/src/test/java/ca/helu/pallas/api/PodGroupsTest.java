package ca.helu.pallas.api;

import static org.assertj.core.api.Assertions.assertThat;

import ca.helu.pallas.api.validation.DeploymentValidator;
import com.fasterxml.jackson.core.JsonProcessingException;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * spec.podGroups as serve -f and the operator check it (issue 21 §4): which pod serves each agent,
 * the rules' words naming each entry (the CRD's side: CelRulesIT, from the rules' examples), and
 * the start order of pods that hold several agents.
 */
class PodGroupsTest {
  private static final String NAME_TAKEN =
      "a pod group may not be named registry nor after an agent (each names a Deployment X-<name>)";
  private static final String GROUPED_AGENT_SETTINGS =
      "an agent in a pod group (agents[].podGroup or spec.defaultPodGroup) takes its replicas,"
          + " resources and pod from its podGroups entry and is not autoscaled: leave replicas,"
          + " autoscaling, resources and pod out";

  private static PallasDeployment fleet(String spec) {
    try {
      return ManifestParser.yamlMapper()
          .readValue(
              "{apiVersion: pallas.helu.ca/v1alpha1, kind: PallasDeployment, metadata: {name:"
                  + " fleet}, spec: {defaultModel: passthrough, "
                  + spec
                  + "}}",
              PallasDeployment.class);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException(e);
    }
  }

  private static AgentSpec agent(PallasDeployment d, String name) {
    return d.getSpec().agent(name).orElseThrow();
  }

  @Test
  void anAgentIsInItsOwnGroupElseTheDefaultElseInAPodOfItsOwn() {
    PallasDeployment d =
        fleet(
            "podGroups: [{name: small, replicas: 2}, {name: big}], defaultPodGroup: small,"
                + " agents: [{name: a}, {name: b, podGroup: big}]");
    assertThat(DeploymentValidator.validate(d)).isEmpty();
    PallasDeploymentSpec spec = d.getSpec();
    assertThat(spec.podNameOf(agent(d, "a"))).isEqualTo("small");
    assertThat(spec.podNameOf(agent(d, "b"))).isEqualTo("big");
    assertThat(spec.replicasOf(agent(d, "a"))).isEqualTo(2);
    assertThat(spec.replicasOf(agent(d, "b"))).isEqualTo(1);
    assertThat(PallasNames.agentPodSelector(d, agent(d, "a")))
        .containsEntry(PallasNames.LABEL_POD_GROUP, "small")
        .doesNotContainKey(PallasNames.LABEL_AGENT);

    PallasDeployment alone = fleet("agents: [{name: a, replicas: 3}]");
    assertThat(alone.getSpec().podNameOf(agent(alone, "a"))).isEqualTo("a");
    assertThat(alone.getSpec().replicasOf(agent(alone, "a"))).isEqualTo(3);
    assertThat(PallasNames.agentPodSelector(alone, agent(alone, "a")))
        .containsEntry(PallasNames.LABEL_AGENT, "a")
        .doesNotContainKey(PallasNames.LABEL_POD_GROUP);
  }

  @Test
  void eachRuleNamesItsField() {
    assertThat(
            DeploymentValidator.validate(
                fleet(
                    "podGroups: [{name: g}, {name: g}, {name: a}, {name: registry},"
                        + " {name: x_y}, {name: x-y}], agents: [{name: a}]")))
        .containsExactlyInAnyOrder(
            "spec.podGroups[1].name: 'g' duplicates spec.podGroups[0]",
            "spec.podGroups[2].name: 'a': " + NAME_TAKEN,
            "spec.podGroups[3].name: 'registry': " + NAME_TAKEN,
            "spec.podGroups[5].name: 'x-y' and spec.podGroups[4] both become 'x-y' in object names"
                + " ('_' is read as '-')");
    assertThat(
            DeploymentValidator.validate(
                fleet(
                    "podGroups: [{name: g}], defaultPodGroup: h, agents: [{name: a, podGroup:"
                        + " k}, {name: b, replicas: 2}, {name: c, resources: {}}]")))
        .containsExactly(
            "spec.defaultPodGroup: 'h' names no entry of spec.podGroups (g)",
            "spec.agents[0].podGroup: 'k' names no entry of spec.podGroups (g)",
            "spec.agents[1]: " + GROUPED_AGENT_SETTINGS,
            "spec.agents[2]: " + GROUPED_AGENT_SETTINGS);
    assertThat(
            DeploymentValidator.validate(
                fleet("podGroups: [{name: " + "g".repeat(60) + "}], agents: [{name: a}]")))
        .containsExactly(
            "spec.podGroups[0].name: 'fleet-"
                + "g".repeat(60)
                + "' (the group's Deployment) would be longer than 63 characters");
  }

  @Test
  void podsThatWouldWaitForEachOtherAreRefusedThoughTheAgentsHaveNoCycle() {
    // a (in g) needs b, which needs c (in g): g waits for b, b for g
    PallasDeployment d =
        fleet(
            "podGroups: [{name: g}], agents: [{name: a, podGroup: g, dependsOn: [b]},"
                + " {name: b, servers: [c]}, {name: c, podGroup: g}]");
    assertThat(AgentGraph.of(d.getSpec()).cycle()).isEmpty();
    assertThat(DeploymentValidator.validate(d))
        .singleElement()
        .asString()
        .startsWith("spec.podGroups: pods that would wait for each other to start: g -> b -> g");
    // all three in the group: the process starts them in order itself
    PallasDeployment together =
        fleet(
            "podGroups: [{name: g}], defaultPodGroup: g, agents: [{name: a, dependsOn: [b]},"
                + " {name: b, servers: [c]}, {name: c}]");
    assertThat(DeploymentValidator.validate(together)).isEmpty();
    AgentGraph graph = AgentGraph.of(together.getSpec());
    assertThat(graph.pods(together.getSpec()).dependencies("g")).isEmpty();
    assertThat(graph.among(Set.of("a", "b", "c")).waves())
        .containsExactly(List.of("c"), List.of("b"), List.of("a"));
    // one process serving a and b alone: c runs elsewhere and is not waited for here
    assertThat(graph.among(Set.of("a", "b")).waves()).containsExactly(List.of("b"), List.of("a"));
  }

  @Test
  void aGroupsProbePortIsNoneOfItsAgentsPorts() {
    assertThat(PallasNames.probePort(24201)).isEqualTo(PallasNames.PROBE_PORT);
    assertThat(PallasNames.probePort(PallasNames.PROBE_PORT)).isEqualTo(8087);
    assertThat(PallasNames.probePort(Set.of(8086, 8087, 9000))).isEqualTo(8088);
  }
}
