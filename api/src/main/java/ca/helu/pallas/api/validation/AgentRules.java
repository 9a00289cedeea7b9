package ca.helu.pallas.api.validation;

import ca.helu.pallas.api.AgentSpec;
import ca.helu.pallas.api.AutoscalingSpec;
import ca.helu.pallas.api.PallasNames;
import java.util.List;
import java.util.function.Function;

/**
 * The rules of one agent: its name is not the registry's, it names no one as itself, and it scales
 * by replicas or an autoscaler.
 */
final class AgentRules {
  private AgentRules() {}

  static final List<Rule> RULES =
      List.of(
          Rule.on(AgentSpec.class)
              .cel("self.name.replace('_', '-') != '" + PallasNames.COMPONENT_REGISTRY + "'")
              .message(
                  "an agent cannot be named '"
                      + PallasNames.COMPONENT_REGISTRY
                      + "' (its Deployment and Service would be the fleet registry's)")
              .fieldPath(".name")
              .example(
                  "{defaultModel: passthrough, agents: [{name: registry}]}", "spec.agents[0].name")
              .holds(a ->
                  a.name() == null
                      || !PallasNames.dnsName(a.name()).equals(PallasNames.COMPONENT_REGISTRY)),
          Rule.on(AgentSpec.class)
              .cel("!has(self.servers) || !(self.name in self.servers)")
              .message("an agent cannot name itself in servers")
              .fieldPath(".servers")
              .example(
                  "{defaultModel: passthrough, agents: [{name: a, servers: [a]}]}",
                  "spec.agents[0].servers")
              .check(itself("servers", AgentSpec::effectiveServers)),
          Rule.on(AgentSpec.class)
              .cel("!has(self.dependsOn) || !(self.name in self.dependsOn)")
              .message("an agent cannot depend on itself")
              .fieldPath(".dependsOn")
              .example(
                  "{defaultModel: passthrough, agents: [{name: a, dependsOn: [a]}]}",
                  "spec.agents[0].dependsOn")
              .check(itself("dependsOn", AgentSpec::effectiveDependsOn)),
          Rule.on(AgentSpec.class)
              .cel("!has(self.replicas) || !has(self.autoscaling)")
              .message("set replicas or autoscaling, not both (the autoscaler sets the replicas)")
              .fieldPath(".autoscaling")
              .example(
                  "{defaultModel: passthrough, agents: [{name: a, replicas: 2, autoscaling:"
                      + " {maxReplicas: 4}}]}",
                  "spec.agents[0].autoscaling")
              .holds(a -> a.replicas() == null || a.autoscaling() == null),
          Rule.on(AutoscalingSpec.class)
              .cel("!has(self.minReplicas) || self.minReplicas <= self.maxReplicas")
              .message("minReplicas must not exceed maxReplicas")
              .fieldPath(".minReplicas")
              .example(
                  "{defaultModel: passthrough, agents: [{name: a, autoscaling: {minReplicas: 5,"
                      + " maxReplicas: 4}}]}",
                  "spec.agents[0].autoscaling.minReplicas")
              .check((s, at, p) -> {
                if (s.minReplicas() != null
                    && s.maxReplicas() != null
                    && s.minReplicas() > s.maxReplicas()) {
                  p.add(
                      at + ".minReplicas",
                      s.minReplicas() + " must not exceed maxReplicas (" + s.maxReplicas() + ")");
                }
              }));

  private static Rule.Check<AgentSpec> itself(
      String list, Function<AgentSpec, List<String>> entries) {
    return (a, at, p) -> {
      List<String> refs = entries.apply(a);
      for (int j = 0; j < refs.size(); j++) {
        if (refs.get(j) != null && refs.get(j).equals(a.name())) {
          p.add(at + "." + list + "[" + j + "]", "'" + a.name() + "' is the agent itself");
        }
      }
    };
  }
}
