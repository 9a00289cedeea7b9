package ca.helu.pallas.api;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Which agents must run before which (docs/runtime.md, "Serve mode"): an agent needs the agents in
 * its {@code dependsOn} and the agents named in its {@code servers}. {@code serve} starts agents in
 * {@link #waves()}; the operator starts an agent's pods once {@link #dependencies} are available.
 */
public final class AgentGraph {
  private final Map<String, Set<String>> needs;

  private AgentGraph(Map<String, Set<String>> needs) {
    this.needs = needs;
  }

  public static AgentGraph of(PallasDeploymentSpec spec) {
    Set<String> agents = new HashSet<>();
    spec.effectiveAgents().forEach(a -> agents.add(a.name()));
    Map<String, Set<String>> needs = new LinkedHashMap<>();
    for (AgentSpec a : spec.effectiveAgents()) {
      Set<String> mine = new LinkedHashSet<>();
      a.effectiveDependsOn().stream().filter(agents::contains).forEach(mine::add);
      a.effectiveServers().stream().filter(agents::contains).forEach(mine::add);
      needs.put(a.name(), Collections.unmodifiableSet(mine));
    }
    return new AgentGraph(needs);
  }

  /**
   * The same needs between the pods that serve the agents ({@link PallasDeploymentSpec#podNameOf}):
   * a pod needs the pods of the agents its agents need, itself excepted (docs/operator.md, "Agents
   * sharing a pod").
   */
  public AgentGraph pods(PallasDeploymentSpec spec) {
    Map<String, String> podOf = new HashMap<>();
    spec.effectiveAgents().forEach(a -> podOf.put(a.name(), spec.podNameOf(a)));
    Map<String, Set<String>> podNeeds = new LinkedHashMap<>();
    needs.forEach((agent, deps) -> {
      String pod = podOf.get(agent);
      Set<String> mine = podNeeds.computeIfAbsent(pod, p -> new LinkedHashSet<>());
      deps.stream().map(podOf::get).filter(d -> !d.equals(pod)).forEach(mine::add);
    });
    return new AgentGraph(podNeeds);
  }

  /**
   * The needs among {@code agents} alone, as one process serving them starts them: the agents they
   * need elsewhere run in other pods, which the operator starts first.
   */
  public AgentGraph among(Set<String> agents) {
    Map<String, Set<String>> inside = new LinkedHashMap<>();
    needs.forEach((agent, deps) -> {
      if (agents.contains(agent)) {
        Set<String> mine = new LinkedHashSet<>(deps);
        mine.retainAll(agents);
        inside.put(agent, Collections.unmodifiableSet(mine));
      }
    });
    return new AgentGraph(inside);
  }

  /** The agents this one needs running first, in manifest order. */
  public Set<String> dependencies(String agent) {
    return needs.getOrDefault(agent, Set.of());
  }

  /** A dependency cycle as {@code a -> b -> a}, if there is one. */
  public Optional<String> cycle() {
    Map<String, Integer> state = new HashMap<>(); // 1 = on the path, 2 = done
    for (String start : needs.keySet()) {
      List<String> path = new ArrayList<>();
      String cycle = visit(start, state, path);
      if (cycle != null) {
        return Optional.of(cycle);
      }
    }
    return Optional.empty();
  }

  /**
   * Agents grouped so that each group's dependencies are all in earlier groups.
   *
   * @throws IllegalStateException on a cycle (validated manifests have none)
   */
  public List<List<String>> waves() {
    Map<String, Set<String>> left = new LinkedHashMap<>(needs);
    Set<String> started = new HashSet<>();
    List<List<String>> waves = new ArrayList<>();
    while (!left.isEmpty()) {
      List<String> wave = new ArrayList<>();
      left.forEach((agent, deps) -> {
        if (started.containsAll(deps)) {
          wave.add(agent);
        }
      });
      if (wave.isEmpty()) {
        throw new IllegalStateException("dependency cycle " + cycle().orElse(left.toString()));
      }
      wave.forEach(left::remove);
      started.addAll(wave);
      waves.add(List.copyOf(wave));
    }
    return waves;
  }

  private String visit(String node, Map<String, Integer> state, List<String> path) {
    Integer st = state.get(node);
    if (st != null && st == 2) {
      return null;
    }
    if (st != null && st == 1) {
      List<String> loop = new ArrayList<>(path.subList(path.indexOf(node), path.size()));
      loop.add(node);
      return String.join(" -> ", loop);
    }
    state.put(node, 1);
    path.add(node);
    for (String next : dependencies(node)) {
      String cycle = visit(next, state, path);
      if (cycle != null) {
        return cycle;
      }
    }
    path.remove(path.size() - 1);
    state.put(node, 2);
    return null;
  }
}
