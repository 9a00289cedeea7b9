package ca.helu.pallas.runtime.serve;

import ca.helu.pallas.api.DeploymentValidator;
import ca.helu.pallas.api.PallasDeploymentSpec;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Seed 001's startup sequence as waves: agents whose dependencies (dependsOn and agents named in
 * servers) are all running start together; the manifest was validated, so there is no cycle.
 */
final class StartOrder {
  private StartOrder() {}

  static List<List<String>> waves(PallasDeploymentSpec spec) {
    Map<String, Set<String>> deps =
        new LinkedHashMap<>(DeploymentValidator.agentDependencies(spec));
    Set<String> started = new HashSet<>();
    List<List<String>> waves = new ArrayList<>();
    while (!deps.isEmpty()) {
      List<String> wave = new ArrayList<>();
      deps.forEach((agent, needs) -> {
        if (started.containsAll(needs)) {
          wave.add(agent);
        }
      });
      if (wave.isEmpty()) {
        throw new IllegalStateException("dependency cycle among " + deps.keySet());
      }
      wave.forEach(deps::remove);
      started.addAll(wave);
      waves.add(wave);
    }
    return waves;
  }
}
