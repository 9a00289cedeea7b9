package ca.helu.pallas.operator.render;

import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Which agents' Deployments may exist (the original Pallas' startup order, on a cluster:
 * docs/operator.md, "Start order"): a pod starts once every agent its agents depend on in other
 * pods is available; one that already runs keeps running while a dependency rolls or restarts. The
 * agents of one pod group start in order inside their pod (docs/runtime.md, "Serve mode").
 *
 * @param startable agents whose pods' Deployment is rendered
 * @param waitingFor the others, each with the dependencies its pod still waits for
 */
public record StartGate(Set<String> startable, Map<String, List<String>> waitingFor) {

  /**
   * @param fleet the rendered fleet
   * @param observed the Deployments of the agents' pods as the cache has them, by agent name
   */
  public static StartGate of(RenderedFleet fleet, Map<String, Deployment> observed) {
    Set<String> startable = new TreeSet<>();
    Map<String, List<String>> waiting = new LinkedHashMap<>();
    for (FleetPod pod : fleet.pods().values()) {
      List<String> missing = new ArrayList<>();
      for (String dependency : pod.dependencies()) {
        if (!available(observed.get(dependency))) {
          missing.add(dependency);
        }
      }
      boolean exists = pod.agentNames().stream().anyMatch(observed::containsKey);
      if (exists || missing.isEmpty()) {
        startable.addAll(pod.agentNames());
      } else {
        pod.agentNames().forEach(agent -> waiting.put(agent, List.copyOf(missing)));
      }
    }
    return new StartGate(Set.copyOf(startable), Map.copyOf(waiting));
  }

  /** Whether a pod's Deployment is rendered: its agents may start. */
  public boolean startable(FleetPod pod) {
    return startable.containsAll(pod.agentNames());
  }

  /** A Deployment whose Available condition is True, with a ready pod unless scaled to zero. */
  public static boolean available(Deployment d) {
    if (d == null || d.getStatus() == null || d.getStatus().getConditions() == null) {
      return false;
    }
    boolean availableCondition =
        d.getStatus().getConditions().stream()
            .anyMatch(c -> "Available".equals(c.getType()) && "True".equals(c.getStatus()));
    int wanted =
        d.getSpec() == null || d.getSpec().getReplicas() == null ? 1 : d.getSpec().getReplicas();
    int ready = d.getStatus().getReadyReplicas() == null ? 0 : d.getStatus().getReadyReplicas();
    return availableCondition && (wanted == 0 || ready > 0);
  }
}
