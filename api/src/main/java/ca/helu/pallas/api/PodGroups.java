package ca.helu.pallas.api;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The rules of {@code spec.podGroups} (docs/operator.md, "Agents sharing a pod"), as {@link
 * DeploymentValidator} checks them; the CRD's CEL rules on {@link PallasDeploymentSpec} say the
 * same with the same messages.
 */
final class PodGroups {
  static final String NAME_TAKEN =
      "a pod group may not be named registry nor after an agent (each names a Deployment X-<name>)";

  static final String GROUPED_AGENT_SETTINGS =
      "an agent in a pod group (agents[].podGroup or spec.defaultPodGroup) takes its replicas,"
          + " resources and pod from its podGroups entry and is not autoscaled: leave replicas,"
          + " autoscaling, resources and pod out";

  private PodGroups() {}

  /**
   * Every problem of the spec's pod groups and of its agents' membership, each naming its field.
   */
  static void check(PallasDeploymentSpec s, List<String> p) {
    List<PodGroupSpec> groups = s.effectivePodGroups();
    if (groups.size() > DeploymentValidator.MAX_AGENTS) {
      p.add("spec.podGroups: at most " + DeploymentValidator.MAX_AGENTS + " entries");
    }
    Set<String> agents =
        s.effectiveAgents().stream()
            .filter(a -> a != null && a.name() != null)
            .map(a -> PallasNames.dnsName(a.name()))
            .collect(Collectors.toSet());
    Map<String, Integer> names = new LinkedHashMap<>();
    Map<String, Integer> dnsNames = new HashMap<>();
    for (int i = 0; i < groups.size(); i++) {
      PodGroupSpec group = groups.get(i);
      String at = "spec.podGroups[" + i + "]";
      if (group == null) {
        p.add(at + ": must not be empty");
        continue;
      }
      if (group.replicas() != null && group.replicas() < 0) {
        p.add(at + ".replicas: " + group.replicas() + " must be >= 0");
      }
      PodSettingsSpec.check(at + ".pod", group.pod(), p);
      if (!DeploymentValidator.checkName(at + ".name", group.name(), p)) {
        continue;
      }
      String dns = PallasNames.dnsName(group.name());
      if (names.putIfAbsent(group.name(), i) != null) {
        p.add(
            at
                + ".name: '"
                + group.name()
                + "' duplicates spec.podGroups["
                + names.get(group.name())
                + "]");
      } else if (dnsNames.putIfAbsent(dns, i) != null) {
        p.add(
            at
                + ".name: '"
                + group.name()
                + "' and spec.podGroups["
                + dnsNames.get(dns)
                + "] both become '"
                + dns
                + "' in object names ('_' is read as '-')");
      }
      if (dns.equals(PallasNames.COMPONENT_REGISTRY) || agents.contains(dns)) {
        p.add(at + ".name: '" + group.name() + "': " + NAME_TAKEN);
      }
    }
    if (s.defaultPodGroup() != null && !names.containsKey(s.defaultPodGroup())) {
      p.add(
          "spec.defaultPodGroup: '"
              + s.defaultPodGroup()
              + "' names no entry of spec.podGroups"
              + known(names));
    }
    List<AgentSpec> list = s.effectiveAgents();
    for (int i = 0; i < list.size(); i++) {
      AgentSpec a = list.get(i);
      if (a == null) {
        continue;
      }
      String at = "spec.agents[" + i + "]";
      if (a.podGroup() != null && !names.containsKey(a.podGroup())) {
        p.add(
            at
                + ".podGroup: '"
                + a.podGroup()
                + "' names no entry of spec.podGroups"
                + known(names));
      }
      if ((a.podGroup() != null || s.defaultPodGroup() != null)
          && (a.replicas() != null
              || a.autoscaling() != null
              || a.resources() != null
              || a.pod() != null)) {
        p.add(at + ": " + GROUPED_AGENT_SETTINGS);
      }
    }
  }

  private static String known(Map<String, Integer> names) {
    return names.isEmpty() ? " (there are none)" : " (" + String.join(", ", names.keySet()) + ")";
  }

  /**
   * A cycle among the pods of a valid spec, which no start order can satisfy although the agents
   * have none: a pod starts once the agents its agents need outside it are available (agent a in
   * group g needs b, b needs c in g).
   */
  static void checkStartOrder(PallasDeploymentSpec s, List<String> p) {
    AgentGraph.of(s)
        .pods(s)
        .cycle()
        .ifPresent(cycle ->
            p.add(
                "spec.podGroups: pods that would wait for each other to start: "
                    + cycle
                    + " (a pod starts once the agents its own agents need are ready; put these"
                    + " agents in one group, or apart)"));
  }
}
