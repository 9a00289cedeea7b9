package ca.helu.pallas.runtime.loop;

import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * The right to take a turn on one conversation in this process: turns run one after another
 * (fairly), so concurrent calls never interleave or corrupt a history (docs/runtime.md,
 * "Conversations and concurrency").
 *
 * <p>The slot is a fair semaphore, not a lock owned by the turn's thread: a call that stops
 * (cancelled, disconnected, its session deleted, its deadline passed) frees the slot at once, even
 * while its thread is still unwinding, so the call queued behind it starts at once; a stopped turn
 * appends nothing (docs/runtime.md, "Deadlines and cancellation").
 */
public final class TurnSlot {
  private final Semaphore slot = new Semaphore(1, true);

  /** Thrown by {@link #exclusive} when the call stopped while it waited for its turn. */
  public static final class Stopped extends Exception {
    public Stopped() {
      super("the call stopped while it waited for its turn", null, false, false);
    }
  }

  /**
   * Runs {@code turn} with the conversation to itself, after the turns queued before it; the slot
   * is freed when {@code turn} returns or when {@code call} stops, whichever comes first.
   */
  public <T> T exclusive(Cancellation call, Supplier<T> turn) throws Stopped {
    try {
      slot.acquire(); // a stop interrupts the wait
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new Stopped();
    }
    AtomicBoolean held = new AtomicBoolean(true);
    Runnable free =
        () -> {
          if (held.compareAndSet(true, false)) {
            slot.release();
          }
        };
    Runnable unregister = call.onStop(why -> free.run());
    try {
      return turn.get();
    } finally {
      unregister.run();
      free.run();
    }
  }

  /** Calls ahead of a new one: the one running and those queued. */
  public int waiting() {
    return (slot.availablePermits() == 0 ? 1 : 0) + slot.getQueueLength();
  }
}
