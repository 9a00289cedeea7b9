package ca.helu.pallas.runtime.health;

import java.util.Optional;
import java.util.function.Supplier;

/**
 * An agent's health as its get_health tool and its health resource show it (docs/contract.md,
 * "get_health" and "Resources"; docs/runtime.md, "Health").
 */
public interface AgentHealth {
  /** get_health's answer from the latest results; starts fresh probes when they are stale. */
  HealthReport report();

  /**
   * The same answer from the latest results, starting nothing: for a {@link HealthWatcher}, which
   * would otherwise start a probe on every probe's result.
   */
  HealthReport current();

  /** Tells {@code watcher} of each result that may have changed the answer. */
  void watch(HealthWatcher watcher);

  /**
   * This health, one more problem added while {@code problem} has one (the conversation store,
   * inbound authentication): its message is {@code prefix} and the problem, after the others.
   */
  default AgentHealth degradedBy(String prefix, Supplier<Optional<String>> problem) {
    AgentHealth health = this;
    return new AgentHealth() {
      @Override
      public HealthReport report() {
        return with(health.report());
      }

      @Override
      public HealthReport current() {
        return with(health.current());
      }

      @Override
      public void watch(HealthWatcher watcher) {
        health.watch(watcher);
      }

      private HealthReport with(HealthReport report) {
        return problem.get().map(p -> HealthReport.degradedBy(report, prefix + p)).orElse(report);
      }
    };
  }
}
