package ca.helu.pallas.runtime.loop;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How one call may stop before its turn ends (docs/runtime.md, "Deadlines and cancellation"): its
 * client cancels it, disconnects or deletes its session, or the turn's deadline passes.
 *
 * <p>The first stop wins, and only while the turn has not ended: a turn that ends first commits
 * with {@link #finish()}, after which a stop is ignored (a cancel for a finished call). A stop runs
 * the actions registered with {@link #onStop} (answer the caller, free the conversation's slot,
 * tell a downstream server), then interrupts the thread running the turn, which aborts what it
 * waits for (the LLM request, a tool call, the slot).
 */
public final class Cancellation {
  private static final Logger LOG = LoggerFactory.getLogger(Cancellation.class);

  /**
   * Fires deadlines; the stop itself runs on a virtual thread, as its actions may write to a slow
   * client. A deadline cancelled (its turn ended) leaves the queue at once, instead of holding its
   * call until the time it would have fired.
   */
  private static final ScheduledExecutorService DEADLINES = deadlineTimer();

  private static ScheduledExecutorService deadlineTimer() {
    ScheduledThreadPoolExecutor timer =
        new ScheduledThreadPoolExecutor(
            1, Thread.ofPlatform().daemon().name("pallas-turn-deadline").factory());
    timer.setRemoveOnCancelPolicy(true);
    return timer;
  }

  /** Why a call stopped. */
  public enum Reason {
    CANCELLED("the client cancelled it (notifications/cancelled)"),
    DISCONNECTED("the client disconnected"),
    SESSION_DELETED("the client deleted its session"),
    DEADLINE("the turn's deadline passed");

    private final String words;

    Reason(String words) {
      this.words = words;
    }

    /** The reason in words, for logs and the notification sent to a downstream server. */
    public String words() {
      return words;
    }
  }

  private final ReentrantLock lock = new ReentrantLock();
  private final List<Consumer<Reason>> actions = new ArrayList<>(); // guarded by lock
  private Reason reason; // guarded by lock
  private boolean finished; // guarded by lock
  private Thread worker; // guarded by lock
  private ScheduledFuture<?> deadlineTimer; // guarded by lock
  private volatile long deadlineNanos;
  private volatile Duration deadline;
  private volatile String waitingFor = "the start of its turn";

  /** A call that has not stopped, without a deadline yet. */
  public Cancellation() {}

  /**
   * Stops the call for {@code why}, unless it has already stopped or finished; true if this stop
   * was the first.
   */
  public boolean stop(Reason why) {
    List<Consumer<Reason>> toRun;
    lock.lock();
    try {
      if (finished || reason != null) {
        return false;
      }
      reason = why;
      toRun = List.copyOf(actions);
      actions.clear();
      if (deadlineTimer != null) {
        deadlineTimer.cancel(false);
      }
    } finally {
      lock.unlock();
    }
    LOG.debug("call stopped: {}", why.words());
    // the actions first: the caller's answer is settled before the interrupted turn unwinds
    toRun.forEach(action -> run(action, why));
    lock.lock();
    try {
      if (worker != null) {
        worker.interrupt();
      }
    } finally {
      lock.unlock();
    }
    return true;
  }

  private static void run(Consumer<Reason> action, Reason why) {
    try {
      action.accept(why);
    } catch (RuntimeException e) {
      LOG.warn("an action on a stopped call failed", e);
    }
  }

  /**
   * Registers {@code action} to run once when the call stops (at once if it has stopped already);
   * the returned handle unregisters it.
   */
  public Runnable onStop(Consumer<Reason> action) {
    Reason stopped;
    lock.lock();
    try {
      stopped = reason;
      if (stopped == null) {
        if (finished) {
          return () -> {};
        }
        actions.add(action);
        return () -> {
          lock.lock();
          try {
            actions.remove(action);
          } finally {
            lock.unlock();
          }
        };
      }
    } finally {
      lock.unlock();
    }
    run(action, stopped);
    return () -> {};
  }

  /**
   * The current thread runs this call's turn: a stop interrupts it until {@link #finish()} or
   * {@link #detach()}. False when the call has stopped already.
   */
  public boolean attach() {
    lock.lock();
    try {
      if (reason != null || finished) {
        return false;
      }
      worker = Thread.currentThread();
      return true;
    } finally {
      lock.unlock();
    }
  }

  /** The turn's thread no longer runs this call: a later stop does not interrupt it. */
  public void detach() {
    lock.lock();
    try {
      if (worker == Thread.currentThread()) {
        worker = null;
      }
    } finally {
      lock.unlock();
    }
  }

  /**
   * Starts the turn's deadline: {@code budget} from now the call stops with {@link
   * Reason#DEADLINE}.
   */
  public void startDeadline(Duration budget) {
    lock.lock();
    try {
      if (reason != null || finished || deadlineTimer != null) {
        return;
      }
      deadline = budget;
      deadlineNanos = System.nanoTime() + budget.toNanos();
      deadlineTimer =
          DEADLINES.schedule(
              () -> Thread.startVirtualThread(() -> stop(Reason.DEADLINE)),
              budget.toNanos(),
              TimeUnit.NANOSECONDS);
    } finally {
      lock.unlock();
    }
  }

  /**
   * The turn ended before any stop: from now on nothing stops it, and its result stands. False when
   * the call stopped first: its caller has its answer already (or none), and the turn's result is
   * dropped.
   */
  public boolean finish() {
    lock.lock();
    try {
      if (worker == Thread.currentThread()) {
        worker = null;
      }
      if (reason != null) {
        return false;
      }
      finished = true;
      actions.clear();
      if (deadlineTimer != null) {
        deadlineTimer.cancel(false);
      }
      return true;
    } finally {
      lock.unlock();
    }
  }

  /** Why the call stopped, or null while it has not. */
  public Reason reason() {
    lock.lock();
    try {
      return reason;
    } finally {
      lock.unlock();
    }
  }

  public boolean stopped() {
    return reason() != null;
  }

  /** The turn's deadline, or null before it started. */
  public Duration deadline() {
    return deadline;
  }

  /** Time left before the deadline; {@code null} when the turn has none (yet). */
  public Duration remaining() {
    if (deadline == null) {
      return null;
    }
    return Duration.ofNanos(Math.max(0, deadlineNanos - System.nanoTime()));
  }

  /** What the turn waits for now, in words ("the model openai.gpt-4o"), for a deadline's error. */
  public void waitingFor(String what) {
    waitingFor = what;
  }

  public String waitingFor() {
    return waitingFor;
  }
}
