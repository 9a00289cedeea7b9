package ca.helu.pallas.runtime.health;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiConsumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One agent's health (docs/contract.md, "get_health"; docs/runtime.md, "Health"): downstream probes
 * run concurrently in the background and on demand, so {@link #report()} answers at once from the
 * latest results even while a server hangs (the original probed inline: 3 s per hung server on
 * every call).
 */
public final class HealthMonitor implements AgentHealth, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(HealthMonitor.class);

  /**
   * A downstream server to probe, and how its calls have gone lately.
   *
   * @param headers the headers of a probe, read at each (an agent's identity token rotates)
   */
  public record Target(
      String name, String url, Supplier<Map<String, String>> headers, CallHealth calls) {
    public Target(String name, String url, Map<String, String> headers, CallHealth calls) {
      this(name, url, () -> headers, calls);
    }

    public Target(String name, String url, Map<String, String> headers) {
      this(name, url, headers, CallHealth.NONE);
    }
  }

  private final List<Target> targets;
  private final Probe probe;
  private final Supplier<CheckResult> provider;
  private final String providerName;
  private final BiConsumer<String, Boolean> onResult;
  private final Map<String, CheckResult> latest = new ConcurrentHashMap<>();
  private final Map<String, AtomicBoolean> running = new ConcurrentHashMap<>();
  private final ScheduledExecutorService scheduler;
  private final ScheduledFuture<?> periodic;
  private final Duration minInterval;
  private final String unavailable;
  private final List<HealthWatcher> watchers = new CopyOnWriteArrayList<>();
  private volatile long lastRefresh;

  /**
   * @param provider the active LLM provider's last check
   * @param onResult told (server, up) after each probe, for pallas_downstream_up
   * @param interval background probe interval
   * @param unavailable why the agent cannot process requests at all (status error), or null
   */
  public HealthMonitor(
      List<Target> targets,
      Probe probe,
      String providerName,
      Supplier<CheckResult> provider,
      BiConsumer<String, Boolean> onResult,
      Duration interval,
      String unavailable) {
    this.unavailable = unavailable;
    this.targets = List.copyOf(targets);
    this.probe = probe;
    this.providerName = providerName;
    this.provider = provider;
    this.onResult = onResult;
    this.minInterval = Duration.ofSeconds(1);
    this.scheduler =
        Executors.newSingleThreadScheduledExecutor(
            Thread.ofPlatform().daemon().name("pallas-health").factory());
    // a tick without servers to probe still tells the watchers, which also read the store and
    // inbound authentication: their changes reach a subscriber within one interval
    this.periodic =
        scheduler.scheduleWithFixedDelay(this::tick, 0, interval.toMillis(), TimeUnit.MILLISECONDS);
    for (Target target : this.targets) {
      target.calls().onFlip(() -> tell(true));
    }
  }

  private void tick() {
    refresh();
    tell(false);
  }

  /** Starts probes that are not already running; returns at once. */
  public void refresh() {
    lastRefresh = System.nanoTime();
    for (Target target : targets) {
      AtomicBoolean busy = running.computeIfAbsent(target.name(), k -> new AtomicBoolean());
      if (busy.compareAndSet(false, true)) {
        Thread.ofVirtual()
            .name("pallas-probe-" + target.name())
            .start(() -> {
              try {
                long started = System.nanoTime();
                CheckResult result =
                    probe
                        .probe(target.url(), target.headers().get())
                        .took(Duration.ofNanos(System.nanoTime() - started));
                CheckResult before = latest.put(target.name(), result);
                onResult.accept(target.name(), result.ok());
                // no result yet counts as reachable (see current())
                tell(before == null ? !result.ok() : before.ok() != result.ok());
              } finally {
                busy.set(false);
              }
            });
      }
    }
  }

  /**
   * The latest probe of the server named {@code target}, timed, or empty before its first (the
   * servers resource of docs/contract.md, "Resources").
   */
  public Optional<CheckResult> latest(String target) {
    return Optional.ofNullable(latest.get(target));
  }

  /** get_health's answer from the latest results; also kicks off fresh probes in the background. */
  @Override
  public HealthReport report() {
    if (unavailable == null && System.nanoTime() - lastRefresh > minInterval.toNanos()) {
      refresh();
    }
    return current();
  }

  @Override
  public void watch(HealthWatcher watcher) {
    watchers.add(watcher);
  }

  /** The LLM provider's check went from passing to failing or back (ProviderHealth). */
  public void providerFlipped() {
    tell(true);
  }

  /**
   * Tells the watchers; one that fails must stop neither the others, nor the periodic tick (a
   * scheduled task that throws is never run again), nor the tool call whose result flipped a check.
   */
  private void tell(boolean flipped) {
    for (HealthWatcher watcher : watchers) {
      try {
        watcher.checked(flipped);
      } catch (RuntimeException e) {
        LOG.warn("telling a health watcher of a result failed: {}", e.toString());
      }
    }
  }

  @Override
  public HealthReport current() {
    if (unavailable != null) {
      return render("error", unavailable);
    }
    List<String> down = new ArrayList<>();
    List<String> failing = new ArrayList<>();
    for (Target t : targets) {
      CheckResult r = latest.get(t.name());
      if (r != null && !r.ok()) {
        down.add(t.name());
      } else {
        // answering initialize is not enough: a server whose calls fail is not healthy either
        t.calls().failing().ifPresent(why -> failing.add(t.name() + " (" + why + ")"));
      }
    }
    CheckResult llm = provider.get();
    List<String> problems = new ArrayList<>();
    if (!down.isEmpty()) {
      problems.add("Unreachable: " + String.join(", ", down));
    }
    if (!failing.isEmpty()) {
      problems.add("Calls failing: " + String.join(", ", failing));
    }
    if (llm != null && !llm.ok()) {
      problems.add("LLM: " + providerName + ": " + llm.message());
    }
    String status = problems.isEmpty() ? "ok" : "degraded";
    return render(status, String.join("; ", problems));
  }

  /** get_health's JSON (docs/contract.md), keys in order status, timestamp, message. */
  public static HealthReport render(String status, String message) {
    ObjectNode json = JsonNodeFactory.instance.objectNode();
    json.put("status", status);
    json.put("timestamp", Instant.now().truncatedTo(ChronoUnit.SECONDS).toString());
    if (message != null && !message.isEmpty()) {
      json.put("message", message);
    }
    return new HealthReport(status, json.toString());
  }

  @Override
  public void close() {
    periodic.cancel(true);
    watchers.clear();
    scheduler.shutdownNow();
  }
}
