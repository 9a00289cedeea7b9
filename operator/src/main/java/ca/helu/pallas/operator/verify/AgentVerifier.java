package ca.helu.pallas.operator.verify;

import ca.helu.pallas.api.AgentSpec;
import ca.helu.pallas.api.AuthSpec;
import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.api.PallasNames;
import ca.helu.pallas.operator.status.Reason;
import ca.helu.pallas.operator.status.Verification;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.inbound.SimpleInboundEventSource;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Keeps every agent's {@link Verification} fresh, off the reconcile threads (docs/status.md,
 * "Verified"). A reconcile reports the agents' Deployments through {@link #observe}; the verifier
 * asks an agent at once when its pods changed (its Deployment's generation or replica counts: a
 * rollout, a pod restarted), then again every interval, sooner after a failure (2 s, doubling up to
 * the interval: a Service's endpoints can lag behind its Deployment's readiness). A result that
 * differs from the last one triggers a reconcile through {@link #eventSource}, which writes it into
 * the status; one that does not changes nothing.
 */
public final class AgentVerifier implements AutoCloseable {
  static final Duration FIRST_RETRY = Duration.ofSeconds(2);

  /**
   * An agent not reported by any reconcile for this long belongs to a deleted fleet (a reconcile
   * comes at least every 10 minutes, see PallasDeploymentReconciler): it is no longer asked.
   */
  static final Duration FORGET_AFTER = Duration.ofMinutes(15);

  private static final int THREADS = 4;

  private final AgentEndpoints endpoints;
  private final McpHandshake handshake;
  private final OperatorTokens tokens;
  private final Duration interval;
  private final Clock clock;
  private final ScheduledExecutorService scheduler;
  private final SimpleInboundEventSource<PallasDeployment> events =
      new SimpleInboundEventSource<>("agent-verifier");
  private final ConcurrentMap<Key, Entry> entries = new ConcurrentHashMap<>();

  /**
   * @param endpoints where an agent's MCP endpoint is
   * @param handshake asks one endpoint; closed with this verifier
   * @param tokens the operator's tokens for agents that ask one of it (a fleet with {@code
   *     spec.auth} and {@code openHealth: false}), or null when it has none
   * @param interval how often an agent that answered is asked again
   */
  public AgentVerifier(
      AgentEndpoints endpoints,
      McpHandshake handshake,
      OperatorTokens tokens,
      Duration interval,
      Clock clock) {
    this.endpoints = endpoints;
    this.handshake = handshake;
    this.tokens = tokens;
    this.interval = interval;
    this.clock = clock;
    this.scheduler =
        Executors.newScheduledThreadPool(
            THREADS, Thread.ofPlatform().name("agent-verifier-", 0).daemon().factory());
  }

  /** Fires when an agent's verification changed: its fleet is reconciled. */
  public EventSource<Void, PallasDeployment> eventSource() {
    return events;
  }

  /**
   * The current verification of each of the fleet's agents, by name; asks the agents whose pods
   * changed since the last call.
   *
   * @param deployments the agents' Deployments by agent name
   */
  public Map<String, Verification> observe(
      PallasDeployment fleet, Map<String, Deployment> deployments) {
    Instant now = clock.instant();
    ResourceID id = ResourceID.fromResource(fleet);
    Map<String, Verification> out = new LinkedHashMap<>();
    for (AgentSpec agent : fleet.getSpec().effectiveAgents()) {
      Key key = new Key(id, agent.name());
      Deployment d = deployments.get(agent.name());
      if (readyReplicas(d) == 0) {
        entries.remove(key);
        out.put(agent.name(), Verification.noReadyPod());
        continue;
      }
      URI uri = endpoints.of(fleet, agent);
      String audience = asksForToken(fleet) ? PallasNames.agentUrl(fleet, agent) : null;
      String pods = pods(d) + " " + uri + " " + audience;
      Entry e = entries.computeIfAbsent(key, k -> new Entry());
      synchronized (e) {
        e.seen = now;
        if (!pods.equals(e.pods)) {
          e.pods = pods;
          e.endpoint = uri;
          e.audience = audience;
          e.epoch++;
          e.failures = 0;
          ask(key, e, e.epoch, Duration.ZERO);
        }
        out.put(agent.name(), e.result == null ? Verification.pending() : e.result);
      }
    }
    // agents removed from the spec
    entries.keySet().removeIf(k -> k.fleet().equals(id) && !out.containsKey(k.agent()));
    return out;
  }

  private void ask(Key key, Entry e, long epoch, Duration delay) {
    if (scheduler.isShutdown()) {
      return;
    }
    scheduler.schedule(() -> check(key, e, epoch), delay.toMillis(), TimeUnit.MILLISECONDS);
  }

  /**
   * Whether the fleet's agents let nobody without a token initialize: then the operator presents a
   * token of its own, which they accept for what openHealth would allow.
   */
  private static boolean asksForToken(PallasDeployment fleet) {
    AuthSpec auth = fleet.getSpec().auth();
    return auth != null && !auth.effectiveOpenHealth();
  }

  private void check(Key key, Entry e, long epoch) {
    URI uri;
    String audience;
    synchronized (e) {
      if (entries.get(key) != e || e.epoch != epoch) {
        return; // superseded: the pods changed, or the agent is gone
      }
      if (Duration.between(e.seen, clock.instant()).compareTo(FORGET_AFTER) > 0) {
        entries.remove(key, e);
        return;
      }
      uri = e.endpoint;
      audience = e.audience;
    }
    Verification v = verify(uri, audience);
    boolean changed;
    Duration next;
    synchronized (e) {
      if (entries.get(key) != e || e.epoch != epoch) {
        return;
      }
      changed = !v.equals(e.result);
      e.result = v;
      e.failures = v.isTrue() ? 0 : e.failures + 1;
      next = v.isTrue() ? interval : retry(e.failures);
    }
    ask(key, e, epoch, next);
    if (changed) {
      events.propagateEvent(key.fleet());
    }
  }

  /** The handshake, with the operator's token for {@code audience} unless null. */
  private Verification verify(URI uri, String audience) {
    if (audience == null || tokens == null) {
      return handshake.run(uri);
    }
    try {
      return handshake.run(uri, tokens.forAudience(audience));
    } catch (OperatorTokens.Unavailable why) {
      return Verification.failed(Reason.InitializeFailed, "initialize: " + why.getMessage());
    }
  }

  /** 2 s after the first failure, doubling, at most the interval. */
  private Duration retry(int failures) {
    Duration wait = FIRST_RETRY.multipliedBy(1L << Math.min(failures - 1, 16));
    return wait.compareTo(interval) < 0 ? wait : interval;
  }

  /**
   * What changes when the agent's pods change: a rollout, a pod that restarted, or a Deployment
   * deleted and created again (a fleet recreated under its old name).
   */
  private static String pods(Deployment d) {
    var s = d.getStatus();
    return d.getMetadata().getUid()
        + "/"
        + d.getMetadata().getGeneration()
        + "/"
        + s.getObservedGeneration()
        + "/"
        + s.getReplicas()
        + "/"
        + s.getUpdatedReplicas()
        + "/"
        + s.getReadyReplicas()
        + "/"
        + s.getAvailableReplicas();
  }

  private static int readyReplicas(Deployment d) {
    return d == null || d.getStatus() == null
        ? 0
        : Objects.requireNonNullElse(d.getStatus().getReadyReplicas(), 0);
  }

  @Override
  public void close() {
    scheduler.shutdownNow();
    handshake.close();
  }

  private record Key(ResourceID fleet, String agent) {}

  /** One agent's last result and what it was asked about; guarded by its own monitor. */
  private static final class Entry {
    String pods;
    URI endpoint;
    String audience;
    long epoch;
    int failures;
    Instant seen;
    Verification result;
  }
}
