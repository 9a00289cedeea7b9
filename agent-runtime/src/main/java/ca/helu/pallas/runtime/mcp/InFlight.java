package ca.helu.pallas.runtime.mcp;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * Counts calls in progress so shutdown can refuse new ones, wait for the rest, and at the deadline
 * answer those still queued or running with an error instead of cutting their connections. A
 * replica whose sessions and conversations live in a store every replica shares serves the calls it
 * still gets while it drains, until the deadline (docs/runtime.md, "Errors callers see"): its
 * responses close their connections, so each client's next call goes to a ready replica.
 */
public final class InFlight {
  private final AtomicInteger calls = new AtomicInteger();
  private final AtomicBoolean draining = new AtomicBoolean();
  private final AtomicBoolean expiredNow = new AtomicBoolean();
  private final boolean serveWhileDraining;
  private final Object drained = new Object();
  private final Sinks.Empty<Void> expired = Sinks.empty();

  /** Refusing new calls once draining. */
  public InFlight() {
    this(false);
  }

  /**
   * @param serveWhileDraining take new calls while draining, until the deadline (another replica
   *     could serve them as well: the sessions and conversations are in a shared store)
   */
  public InFlight(boolean serveWhileDraining) {
    this.serveWhileDraining = serveWhileDraining;
  }

  /** False once draining (past the deadline, when serving while draining): refuse the call. */
  public boolean enter() {
    calls.incrementAndGet();
    if (serveWhileDraining ? expiredNow.get() : draining.get()) {
      exit();
      return false;
    }
    return true;
  }

  public void exit() {
    if (calls.decrementAndGet() == 0) {
      synchronized (drained) {
        drained.notifyAll();
      }
    }
  }

  /** Calls in progress now (waiting for their conversation or running). */
  public int calls() {
    return calls.get();
  }

  public boolean draining() {
    return draining.get();
  }

  /** Completes when the drain deadline has passed: calls still queued or running answer then. */
  public Mono<Void> expiry() {
    return expired.asMono();
  }

  /** The drain deadline passed: every call still waiting or running gets its answer now. */
  public void expire() {
    draining.set(true);
    expiredNow.set(true);
    expired.tryEmitEmpty();
  }

  /**
   * Refuses new calls (or, serving while draining, counts them in) and waits up to {@code timeout}
   * for the calls in progress; true if all finished.
   */
  public boolean drain(Duration timeout) throws InterruptedException {
    draining.set(true);
    long deadline = System.nanoTime() + timeout.toNanos();
    synchronized (drained) {
      while (calls.get() > 0) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return false;
        }
        drained.wait(Math.max(1, left / 1_000_000));
      }
    }
    return true;
  }
}
