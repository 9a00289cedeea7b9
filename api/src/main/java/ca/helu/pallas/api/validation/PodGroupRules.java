package ca.helu.pallas.api.validation;

import ca.helu.pallas.api.AgentGraph;
import ca.helu.pallas.api.AgentSpec;
import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.api.PallasDeploymentSpec;
import ca.helu.pallas.api.PallasNames;
import ca.helu.pallas.api.PodGroupSpec;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * The rules of {@code spec.podGroups} (docs/operator.md, "Agents sharing a pod"): a group is
 * declared once, named apart from the agents, and an agent in one leaves its pods' count, resources
 * and settings to it. What no CRD can check, pods that would wait for each other to start, is
 * {@link #checkStartOrder}.
 */
final class PodGroupRules {
  static final String NAME_TAKEN =
      "a pod group may not be named registry nor after an agent (each names a Deployment X-<name>)";

  static final String GROUPED_AGENT_SETTINGS =
      "an agent in a pod group (agents[].podGroup or spec.defaultPodGroup) takes its replicas,"
          + " resources and pod from its podGroups entry and is not autoscaled: leave replicas,"
          + " autoscaling, resources and pod out";

  private static final Pattern NAME = Pattern.compile(PallasNames.NAME_PATTERN);

  private PodGroupRules() {}

  static final List<Rule> RULES =
      List.of(
          Rule.on(PallasDeployment.class)
              .cel(
                  "!has(self.spec) || !has(self.spec.podGroups) || self.spec.podGroups.all(g,"
                      + " size(self.metadata.name) + 1 + size(g.name) <= 63)")
              .message(
                  "metadata.name-podGroups[].name must be at most 63 characters (it names the"
                      + " group's Deployment)")
              .fieldPath(".spec.podGroups")
              .example(
                  "{defaultModel: passthrough, podGroups: [{name: "
                      + "g".repeat(60)
                      + "}], agents: [{name: a}]}",
                  "spec.podGroups")
              .check((d, at, p) -> {
                if (d.name() == null || d.getSpec() == null) {
                  return;
                }
                List<PodGroupSpec> groups = d.getSpec().effectivePodGroups();
                for (int i = 0; i < groups.size(); i++) {
                  PodGroupSpec g = groups.get(i);
                  if (g != null
                      && g.name() != null
                      && d.name().length() + 1 + g.name().length() > 63) {
                    p.add(
                        "spec.podGroups[" + i + "].name",
                        "'"
                            + PallasNames.agentObject(d.name(), g.name())
                            + "' (the group's Deployment) would be longer than 63 characters");
                  }
                }
              }),
          Rule.on(PallasDeploymentSpec.class)
              .cel(
                  "!has(self.podGroups) || self.podGroups.all(g, self.podGroups.exists_one(h,"
                      + " h.name.replace('_', '-') == g.name.replace('_', '-')))")
              .message(
                  "podGroups[].name must be unique, also with '_' read as '-' (both name one"
                      + " Deployment)")
              .fieldPath(".podGroups")
              .example(
                  "{defaultModel: passthrough, podGroups: [{name: g_h}, {name: g-h}], agents:"
                      + " [{name: a}]}",
                  "spec.podGroups")
              .check(PodGroupRules::uniqueGroups),
          Rule.on(PallasDeploymentSpec.class)
              .cel(
                  "!has(self.podGroups) || self.podGroups.all(g, g.name != '"
                      + PallasNames.COMPONENT_REGISTRY
                      + "' && (!has(self.agents) || !self.agents.exists(a,"
                      + " a.name.replace('_', '-') == g.name.replace('_', '-'))))")
              .message(NAME_TAKEN)
              .fieldPath(".podGroups")
              .example(
                  "{defaultModel: passthrough, podGroups: [{name: a}], agents: [{name: a}]}",
                  "spec.podGroups")
              .check((s, at, p) -> {
                Set<String> agents =
                    s.effectiveAgents().stream()
                        .filter(a -> a != null && a.name() != null)
                        .map(a -> PallasNames.dnsName(a.name()))
                        .collect(Collectors.toSet());
                List<PodGroupSpec> groups = s.effectivePodGroups();
                for (int i = 0; i < groups.size(); i++) {
                  PodGroupSpec g = groups.get(i);
                  if (g == null || g.name() == null) {
                    continue;
                  }
                  String dns = PallasNames.dnsName(g.name());
                  if (dns.equals(PallasNames.COMPONENT_REGISTRY) || agents.contains(dns)) {
                    p.add(at + ".podGroups[" + i + "].name", "'" + g.name() + "': " + NAME_TAKEN);
                  }
                }
              }),
          Rule.on(PallasDeploymentSpec.class)
              .cel(
                  "!has(self.defaultPodGroup) || (has(self.podGroups) &&"
                      + " self.podGroups.exists(g, g.name == self.defaultPodGroup))")
              .message("defaultPodGroup must name an entry of podGroups")
              .fieldPath(".defaultPodGroup")
              .example(
                  "{defaultModel: passthrough, defaultPodGroup: g, agents: [{name: a}]}",
                  "spec.defaultPodGroup")
              .check((s, at, p) -> {
                if (s.defaultPodGroup() != null && !declared(s, s.defaultPodGroup())) {
                  p.add(
                      at + ".defaultPodGroup",
                      "'" + s.defaultPodGroup() + "' names no entry of spec.podGroups" + known(s));
                }
              }),
          Rule.on(PallasDeploymentSpec.class)
              .cel(
                  "!has(self.agents) || self.agents.all(a, !has(a.podGroup) ||"
                      + " (has(self.podGroups) && self.podGroups.exists(g, g.name =="
                      + " a.podGroup)))")
              .message("agents[].podGroup must name an entry of podGroups")
              .fieldPath(".agents")
              .example(
                  "{defaultModel: passthrough, podGroups: [{name: g}], agents: [{name: a,"
                      + " podGroup: h}]}",
                  "spec.agents")
              .check((s, at, p) -> {
                List<AgentSpec> agents = s.effectiveAgents();
                for (int i = 0; i < agents.size(); i++) {
                  AgentSpec a = agents.get(i);
                  if (a != null && a.podGroup() != null && !declared(s, a.podGroup())) {
                    p.add(
                        at + ".agents[" + i + "].podGroup",
                        "'" + a.podGroup() + "' names no entry of spec.podGroups" + known(s));
                  }
                }
              }),
          Rule.on(PallasDeploymentSpec.class)
              .cel(
                  "!has(self.agents) || self.agents.all(a, !(has(a.podGroup) ||"
                      + " has(self.defaultPodGroup)) || !(has(a.replicas) || has(a.autoscaling)"
                      + " || has(a.resources) || has(a.pod)))")
              .message(GROUPED_AGENT_SETTINGS)
              .fieldPath(".agents")
              .example(
                  "{defaultModel: passthrough, podGroups: [{name: g}], defaultPodGroup: g,"
                      + " agents: [{name: a, autoscaling: {maxReplicas: 3}}]}",
                  "spec.agents")
              .check((s, at, p) -> {
                List<AgentSpec> agents = s.effectiveAgents();
                for (int i = 0; i < agents.size(); i++) {
                  AgentSpec a = agents.get(i);
                  if (a != null
                      && (a.podGroup() != null || s.defaultPodGroup() != null)
                      && (a.replicas() != null
                          || a.autoscaling() != null
                          || a.resources() != null
                          || a.pod() != null)) {
                    p.add(at + ".agents[" + i + "]", GROUPED_AGENT_SETTINGS);
                  }
                }
              }));

  /**
   * Pods that no start order can satisfy although the agents have no cycle: a pod starts once the
   * agents its agents need outside it are available (agent a in group g needs b, b needs c in g).
   */
  static void checkStartOrder(PallasDeploymentSpec s, Problems p) {
    AgentGraph.of(s)
        .pods(s)
        .cycle()
        .ifPresent(cycle ->
            p.add(
                "spec.podGroups",
                "pods that would wait for each other to start: "
                    + cycle
                    + " (a pod starts once the agents its own agents need are ready; put these"
                    + " agents in one group, or apart)"));
  }

  private static boolean declared(PallasDeploymentSpec s, String group) {
    return s.effectivePodGroups().stream().anyMatch(g -> g != null && group.equals(g.name()));
  }

  private static String known(PallasDeploymentSpec s) {
    List<String> names =
        s.effectivePodGroups().stream()
            .filter(g -> g != null && g.name() != null)
            .map(PodGroupSpec::name)
            .toList();
    return names.isEmpty() ? " (there are none)" : " (" + String.join(", ", names) + ")";
  }

  private static void uniqueGroups(PallasDeploymentSpec s, String at, Problems p) {
    Map<String, Integer> first = new LinkedHashMap<>();
    Map<String, Integer> firstDns = new HashMap<>();
    List<PodGroupSpec> groups = s.effectivePodGroups();
    for (int i = 0; i < groups.size(); i++) {
      PodGroupSpec g = groups.get(i);
      // a name that breaks its pattern is the field's constraint to report
      if (g == null || g.name() == null || !NAME.matcher(g.name()).matches()) {
        continue;
      }
      String field = at + ".podGroups[" + i + "].name";
      String dns = PallasNames.dnsName(g.name());
      Integer earlier = first.putIfAbsent(g.name(), i);
      if (earlier != null) {
        p.add(field, "'" + g.name() + "' duplicates spec.podGroups[" + earlier + "]");
      } else if ((earlier = firstDns.putIfAbsent(dns, i)) != null) {
        p.add(
            field,
            "'"
                + g.name()
                + "' and spec.podGroups["
                + earlier
                + "] both become '"
                + dns
                + "' in object names ('_' is read as '-')");
      }
    }
  }
}
