package ca.helu.pallas.runtime.health;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether the LLM providers of the agents' models answer (docs/runtime.md, "Health"): each model is
 * checked at startup (warn only) and again every period; get_health reads the latest result.
 */
public final class ProviderHealth implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ProviderHealth.class);

  /** A model to check: its key (provider.model), its provider, and the check itself. */
  public record Target(String key, String provider, Supplier<CheckResult> check) {}

  private final BiConsumer<String, Boolean> onResult;
  private final Map<String, CheckResult> latest = new ConcurrentHashMap<>();
  private final Map<String, List<Runnable>> flips = new ConcurrentHashMap<>();
  private final ScheduledExecutorService reprobe =
      Executors.newSingleThreadScheduledExecutor(
          Thread.ofPlatform().daemon().name("pallas-llm-reprobe").factory());

  /**
   * @param onResult told (provider, up) after each check, for pallas_llm_provider_up
   */
  public ProviderHealth(BiConsumer<String, Boolean> onResult) {
    this.onResult = onResult;
  }

  /** Checks every target now, then again every {@code period}. */
  public void start(Collection<Target> targets, Duration period) {
    List<Target> all = List.copyOf(targets);
    // on virtual threads, not a parallel stream: the common pool has one thread on 2 cores and the
    // MCP SDK completes its futures there, so a 5 s probe must never occupy it
    Runnable checkAll =
        () -> {
          try (var checks = Executors.newVirtualThreadPerTaskExecutor()) {
            for (Target target : all) {
              checks.submit(() -> check(target));
            }
          }
        };
    checkAll.run();
    long millis = period.toMillis();
    reprobe.scheduleWithFixedDelay(checkAll, millis, millis, TimeUnit.MILLISECONDS);
  }

  /**
   * Runs {@code flip} each time the check of the model with this key goes from passing to failing
   * or back (a health subscriber hears of it at once: docs/runtime.md, "Health as a resource").
   */
  public void onFlip(String key, Runnable flip) {
    flips.computeIfAbsent(key, k -> new CopyOnWriteArrayList<>()).add(flip);
  }

  /** The latest check of the model with this key, or null before the first. */
  public CheckResult latest(String key) {
    return latest.get(key);
  }

  private void check(Target target) {
    CheckResult r = target.check().get();
    CheckResult before = latest.put(target.key(), r);
    onResult.accept(target.provider(), r.ok());
    if (!r.ok() && (before == null || before.ok())) {
      LOG.warn("LLM preflight failed for {}: {}", target.key(), r.message());
      flipped(target.key());
    } else if (r.ok() && before != null && !before.ok()) {
      LOG.info("LLM provider {} is reachable again", target.key());
      flipped(target.key());
    }
  }

  private void flipped(String key) {
    flips.getOrDefault(key, List.of()).forEach(Runnable::run);
  }

  @Override
  public void close() {
    reprobe.shutdownNow();
  }
}
