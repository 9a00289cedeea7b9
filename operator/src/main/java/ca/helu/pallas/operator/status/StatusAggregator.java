package ca.helu.pallas.operator.status;

import ca.helu.pallas.api.AgentSpec;
import ca.helu.pallas.api.AuthSpec;
import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.api.PallasDeploymentSpec;
import ca.helu.pallas.api.PallasDeploymentStatus;
import ca.helu.pallas.api.PallasDeploymentStatus.AgentStatus;
import ca.helu.pallas.api.PallasDeploymentStatus.ServerInfo;
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
 * conditions Ready, Progressing, Degraded and Verified with a {@link Reason}, each agent's URL,
 * replicas and MCP handshake. A condition keeps its {@code lastTransitionTime} while its status
 * stays the same, so the same observation gives the same status and nothing is written
 * (docs/status.md).
 */
public final class StatusAggregator {
  public static final String READY = "Ready";
  public static final String PROGRESSING = "Progressing";
  public static final String DEGRADED = "Degraded";
  public static final String VERIFIED = "Verified";
  public static final String CALLERS_AUTHENTICATED = "CallersAuthenticated";
  public static final String CONVERSATIONS_DURABLE = "ConversationsDurable";

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
    List<AgentStatus> previousAgents =
        primary.getStatus() == null || primary.getStatus().agents() == null
            ? List.of()
            : primary.getStatus().agents();
    String time = now.truncatedTo(ChronoUnit.SECONDS).toString();
    int ready = 0;
    for (AgentSpec agent : agents) {
      Deployment d = o.agents().get(agent.name());
      // with autoscaling, ready at its minimum; the pods wanted now are the autoscaler's choice
      int wanted = primary.getSpec().replicasOf(agent);
      int readyReplicas = readyReplicas(d);
      List<String> waitingFor = o.gate() == null ? null : o.gate().waitingFor().get(agent.name());
      Verification v = o.verifications() == null ? null : o.verifications().get(agent.name());
      agentStatus.add(
          new AgentStatus(
              agent.name(),
              PallasNames.agentUrl(primary, agent),
              readyReplicas,
              agent.autoscaling() != null && d != null && d.getSpec().getReplicas() != null
                  ? d.getSpec().getReplicas()
                  : wanted,
              waitingFor,
              v == null
                  ? null
                  : List.of(
                      new Cond(v.status(), v.reason(), v.message())
                          .toCondition(
                              VERIFIED, generation, agentConditions(previousAgents, agent), time)),
              v == null || v.serverName() == null
                  ? null
                  : new ServerInfo(v.serverName(), v.serverVersion()),
              v == null ? null : v.protocolVersion(),
              v == null ? null : v.tools()));
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
    List<Condition> conditions = new ArrayList<>();
    conditions.add(readyCond.toCondition(READY, generation, previous, time));
    conditions.add(progressing.toCondition(PROGRESSING, generation, previous, time));
    conditions.add(degraded.toCondition(DEGRADED, generation, previous, time));
    if (o.verifications() != null) {
      conditions.add(
          verified(agents, o.verifications()).toCondition(VERIFIED, generation, previous, time));
    }
    conditions.add(
        callersAuthenticated(primary.getSpec().auth())
            .toCondition(CALLERS_AUTHENTICATED, generation, previous, time));
    conditions.add(
        conversationsDurable(primary.getSpec(), o.store())
            .toCondition(CONVERSATIONS_DURABLE, generation, previous, time));
    return new PallasDeploymentStatus(
        generation,
        conditions,
        PallasNames.registryUrl(primary),
        ready + "/" + agents.size(),
        agentStatus);
  }

  /**
   * Where the agents keep their conversations (docs/operator.md, "The conversation store"): in
   * memory a restart, a rollout or another replica loses them (issue 17).
   */
  static Cond conversationsDurable(PallasDeploymentSpec spec, String store) {
    if (store == null) {
      return new Cond(
          false,
          Reason.InMemory,
          "each agent pod keeps its conversations in memory: a restart, a rollout or another"
              + " replica loses them; set spec.store, or install the chart with"
              + " store.fleetDefault");
    }
    return new Cond(
        true,
        Reason.StoreConfigured,
        "the agents keep their conversations in the PostgreSQL of Secret '"
            + store
            + "'"
            + (spec.store() == null ? " (the operator's default store)" : ""));
  }

  /**
   * Whether the agents ask their callers for a token (spec.auth, docs/runtime.md, "Inbound
   * authentication"): a fleet without works, but says so (issue 18 §1).
   */
  static Cond callersAuthenticated(AuthSpec auth) {
    if (auth == null) {
      return new Cond(
          false,
          Reason.NoInboundAuth,
          "spec.auth is not set: anyone who can reach an agent's port may call it and spend its"
              + " LLM tokens; set spec.auth (oidc or staticTokens) and keep the NetworkPolicy on");
    }
    return auth.oidc() != null
        ? new Cond(
            true, Reason.OidcTokens, "every agent asks for a token of " + auth.oidc().issuerUrl())
        : new Cond(
            true,
            Reason.StaticTokens,
            "every agent asks for a token of Secret '" + auth.staticTokens().secretName() + "'");
  }

  /**
   * True when every agent answered; False naming each agent that did not and why; Unknown while
   * some are not asked yet and none failed.
   */
  private static Cond verified(List<AgentSpec> agents, Map<String, Verification> verifications) {
    List<String> failed = new ArrayList<>();
    List<String> pending = new ArrayList<>();
    for (AgentSpec agent : agents) {
      Verification v = verifications.getOrDefault(agent.name(), Verification.pending());
      if (v.isFalse()) {
        failed.add(agent.name() + ": " + v.message());
      } else if (!v.isTrue()) {
        pending.add(agent.name());
      }
    }
    String notAsked = pending.isEmpty() ? null : "not asked yet: " + String.join(", ", pending);
    if (!failed.isEmpty()) {
      if (notAsked != null) {
        failed.add(notAsked);
      }
      return new Cond(false, Reason.AgentsNotVerified, String.join("; ", failed));
    }
    if (notAsked != null) {
      return new Cond("Unknown", Reason.Verifying, notAsked);
    }
    return new Cond(
        true,
        Reason.AllAgentsVerified,
        "every agent answered initialize and tools/list ("
            + agents.size()
            + " of "
            + agents.size()
            + ")");
  }

  private static List<Condition> agentConditions(List<AgentStatus> previous, AgentSpec agent) {
    return previous.stream()
        .filter(a -> agent.name().equals(a.name()) && a.conditions() != null)
        .findFirst()
        .map(AgentStatus::conditions)
        .orElse(List.of());
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

  private record Cond(String status, Reason reason, String message) {
    Cond(boolean status, Reason reason, String message) {
      this(status ? "True" : "False", reason, message);
    }

    Condition toCondition(String type, long generation, List<Condition> previous, String now) {
      String value = status;
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
