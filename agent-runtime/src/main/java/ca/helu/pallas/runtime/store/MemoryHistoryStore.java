package ca.helu.pallas.runtime.store;

import ca.helu.pallas.api.InstanceScope;
import java.util.function.LongSupplier;

/**
 * Histories in this process's memory, as {@code serve} keeps them by default: nothing to install,
 * gone when the process ends, one per replica (docs/runtime.md, "Conversations").
 */
public final class MemoryHistoryStore implements HistoryStore {
  private final LongSupplier clock;

  public MemoryHistoryStore() {
    this(System::nanoTime);
  }

  /** A store whose idle expiry reads {@code clock} (nanoseconds). */
  public MemoryHistoryStore(LongSupplier clock) {
    this.clock = clock;
  }

  @Override
  public AgentHistories forAgent(String agent, InstanceScope scope, HistoryBounds bounds) {
    return new MemoryHistories(scope, bounds, clock);
  }

  @Override
  public String describe() {
    return "memory";
  }

  @Override
  public void close() {}
}
