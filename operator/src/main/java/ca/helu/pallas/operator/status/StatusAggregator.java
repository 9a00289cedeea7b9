package ca.helu.pallas.operator.status;

import ca.helu.pallas.api.AgentSpec;
import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.api.PallasDeploymentStatus;
import ca.helu.pallas.api.PallasDeploymentStatus.AgentStatus;
import ca.helu.pallas.api.PallasNames;
import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentCondition;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Builds a PallasDeployment's status from one {@link Observation}: {@code observedGeneration},
 * conditions Ready, Progressing and Degraded with a {@link Reason}, each agent's URL and replicas.
 * A condition keeps its {@code lastTransitionTime} while its status stays the same, so the same
 * observation gives the same status and nothing is written (docs/status.md).
 */
public final class StatusAggregator {
  public static final String READY = "Ready";
  public static final String PROGRESSING = "Progressing";
  public static final String DEGRADED = "Degraded";

  private StatusAggregator() {}

  public static PallasDeploymentStatus aggregate(
      PallasDeployment primary, Observation o, Instant now) {
    long generation =
        primary.getMetadata().getGeneration() == null ? 0 : primary.getMetadata().getGeneration();
    List<AgentSpec> agents = primary.getSpec().effectiveAgents();
    List<AgentStatus> agentStatus = new ArrayList<>();
    List<String> notReady = new ArrayList<>();
    List<String> rolling = new ArrayList<>();
    List<String> failing = new ArrayList<>();
    int ready = 0;
    for (AgentSpec agent : agents) {
      Deployment d = o.agents().get(agent.name());
      // with autoscaling, ready at its minimum; the pods wanted now are the autoscaler's choice
      int wanted = agent.effectiveReplicas();
      int readyReplicas = readyReplicas(d);
      List<String> waitingFor = o.gate() == null ? null : o.gate().waitingFor().get(agent.name());
      agentStatus.add(
          new AgentStatus(
              agent.name(),
              PallasNames.agentUrl(primary, agent),
              readyReplicas,
              agent.autoscaling() != null && d != null && d.getSpec().getReplicas() != null
                  ? d.getSpec().getReplicas()
                  : wanted,
              waitingFor));
      if (d != null && readyReplicas >= wanted) {
        ready++;
      } else {
        notReady.add(agent.name() + " " + readyReplicas + "/" + wanted);
      }
      if (d != null && !rolledOut(d)) {
        rolling.add(agent.name());
      }
      failure(d).ifPresent(f -> failing.add(agent.name() + ": " + f));
    }
    boolean registryReady = o.registry() != null && readyReplicas(o.registry()) >= 1;
    if (o.registry() != null && !rolledOut(o.registry())) {
      rolling.add("registry");
    }

    Cond readyCond;
    Cond progressing;
    Cond degraded;
    if (!o.invalid().isEmpty()) {
      String message = String.join("; ", o.invalid()) + " (running objects are unchanged)";
      readyCond = new Cond(false, Reason.InvalidSpec, message);
      progressing = new Cond(false, Reason.InvalidSpec, message);
      degraded = new Cond(true, Reason.InvalidSpec, message);
    } else if (!o.missingSecrets().isEmpty()) {
      String message = String.join("; ", o.missingSecrets()) + " (running objects are unchanged)";
      readyCond = new Cond(false, Reason.SecretMissing, message);
      progressing = new Cond(false, Reason.SecretMissing, message);
      degraded = new Cond(true, Reason.SecretMissing, message);
    } else {
      Map<String, List<String>> waiting = o.gate() == null ? Map.of() : o.gate().waitingFor();
      String waits = waits(waiting);
      if (o.failure() != null) {
        readyCond = new Cond(false, Reason.ReconcileFailed, o.failure());
      } else if (!waiting.isEmpty()) {
        readyCond = new Cond(false, Reason.WaitingForDependencies, waits);
      } else if (!notReady.isEmpty()) {
        readyCond = new Cond(false, Reason.AgentsNotReady, "ready: " + String.join(", ", notReady));
      } else if (!registryReady) {
        readyCond = new Cond(false, Reason.RegistryNotReady, "the registry pod is not ready");
      } else {
        readyCond =
            new Cond(
                true,
                Reason.AllAgentsReady,
                ready
                    + " of "
                    + agents.size()
                    + " agents ready; registry at "
                    + PallasNames.registryUrl(primary));
      }
      if (!waiting.isEmpty()) {
        progressing = new Cond(true, Reason.WaitingForDependencies, waits);
      } else if (!rolling.isEmpty() || o.registry() == null) {
        progressing =
            new Cond(
                true,
                Reason.RollingOut,
                rolling.isEmpty()
                    ? "creating the registry"
                    : "rolling out: " + String.join(", ", rolling));
      } else {
        progressing = new Cond(false, Reason.Converged, "every Deployment runs the current spec");
      }
      if (o.failure() != null) {
        degraded = new Cond(true, Reason.ReconcileFailed, o.failure());
      } else if (!failing.isEmpty()) {
        degraded = new Cond(true, Reason.AgentsFailing, String.join("; ", failing));
      } else if (o.serviceMonitorWanted() && !o.serviceMonitorCrdInstalled()) {
        degraded =
            new Cond(
                true,
                Reason.ServiceMonitorSkipped,
                "spec.monitoring.serviceMonitor.enabled is true but the ServiceMonitor CRD"
                    + " (monitoring.coreos.com/v1) is not installed; it is created as soon as the"
                    + " Prometheus Operator is");
      } else {
        degraded = new Cond(false, Reason.AsExpected, "nothing is failing");
      }
    }
    List<Condition> previous =
        primary.getStatus() == null || primary.getStatus().conditions() == null
            ? List.of()
            : primary.getStatus().conditions();
    String time = now.truncatedTo(ChronoUnit.SECONDS).toString();
    List<Condition> conditions =
        List.of(
            readyCond.toCondition(READY, generation, previous, time),
            progressing.toCondition(PROGRESSING, generation, previous, time),
            degraded.toCondition(DEGRADED, generation, previous, time));
    return new PallasDeploymentStatus(
        generation,
        conditions,
        PallasNames.registryUrl(primary),
        ready + "/" + agents.size(),
        agentStatus);
  }

  private static String waits(Map<String, List<String>> waiting) {
    List<String> parts = new ArrayList<>();
    waiting.entrySet().stream()
        .sorted(Map.Entry.comparingByKey())
        .forEach(e -> parts.add(e.getKey() + " waits for " + String.join(", ", e.getValue())));
    return String.join("; ", parts);
  }

  private static int readyReplicas(Deployment d) {
    return d == null || d.getStatus() == null || d.getStatus().getReadyReplicas() == null
        ? 0
        : d.getStatus().getReadyReplicas();
  }

  /** The Deployment controller has seen the latest spec and every pod runs it. */
  private static boolean rolledOut(Deployment d) {
    var status = d.getStatus();
    if (status == null || status.getObservedGeneration() == null) {
      return false;
    }
    int wanted = d.getSpec().getReplicas() == null ? 1 : d.getSpec().getReplicas();
    return status.getObservedGeneration() >= d.getMetadata().getGeneration()
        && Objects.requireNonNullElse(status.getUpdatedReplicas(), 0) >= wanted
        && Objects.requireNonNullElse(status.getReplicas(), 0) <= wanted
        && Objects.requireNonNullElse(status.getAvailableReplicas(), 0) >= wanted;
  }

  private static java.util.Optional<String> failure(Deployment d) {
    if (d == null || d.getStatus() == null || d.getStatus().getConditions() == null) {
      return java.util.Optional.empty();
    }
    for (DeploymentCondition c : d.getStatus().getConditions()) {
      boolean deadline =
          "Progressing".equals(c.getType())
              && "False".equals(c.getStatus())
              && "ProgressDeadlineExceeded".equals(c.getReason());
      boolean replicaFailure = "ReplicaFailure".equals(c.getType()) && "True".equals(c.getStatus());
      if (deadline || replicaFailure) {
        return java.util.Optional.of(c.getReason() + ": " + c.getMessage());
      }
    }
    return java.util.Optional.empty();
  }

  private record Cond(boolean status, Reason reason, String message) {
    Condition toCondition(String type, long generation, List<Condition> previous, String now) {
      String value = status ? "True" : "False";
      String since =
          previous.stream()
              .filter(c -> type.equals(c.getType()) && value.equals(c.getStatus()))
              .map(Condition::getLastTransitionTime)
              .filter(Objects::nonNull)
              .findFirst()
              .orElse(now);
      return new ConditionBuilder()
          .withType(type)
          .withStatus(value)
          .withReason(reason.name())
          .withMessage(message)
          .withObservedGeneration(generation)
          .withLastTransitionTime(since)
          .build();
    }
  }
}
