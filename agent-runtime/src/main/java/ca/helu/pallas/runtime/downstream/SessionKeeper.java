package ca.helu.pallas.runtime.downstream;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The session new calls to one server use, opened on first use and replaced when it is retired, one
 * opening at a time: calls that need a session while one is being opened wait for that one (each
 * within its own timeout) rather than each opening its own. After one failed opening the next call
 * tries again; after more, the next opening waits a growing delay (0.1 s doubling to 5 s), calls
 * failing at once meanwhile with the last failure. So a server that is down, or keeps losing our
 * sessions, sees at most one initialize at a time and a few a second, not one per call
 * (docs/runtime.md, "Downstream failures").
 */
final class SessionKeeper implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(SessionKeeper.class);
  private static final long FIRST_BACKOFF = Duration.ofMillis(100).toNanos();
  private static final long MAX_BACKOFF = Duration.ofSeconds(5).toNanos();
  private static final Executor OPENERS =
      task -> Thread.ofVirtual().name("pallas-connect").start(task);

  private final String name;
  private final Duration timeout;
  private final Function<Consumer<DownstreamSession>, DownstreamSession> opener;
  private final Set<DownstreamSession> open = ConcurrentHashMap.newKeySet();
  private final Object lock = new Object();
  private DownstreamSession current;
  private CompletableFuture<DownstreamSession> opening;
  private int failures;
  private long retryAt;
  private DownstreamException lastFailure;
  private boolean closed;

  /**
   * @param opener opens a session (blocking, within the timeout), given what to tell when the
   *     server no longer knows it
   */
  SessionKeeper(
      String name,
      Duration timeout,
      Function<Consumer<DownstreamSession>, DownstreamSession> opener) {
    this.name = name;
    this.timeout = timeout;
    this.opener = opener;
  }

  /**
   * A session that took the caller's call ({@link DownstreamSession#enter()}): the caller must
   * {@link DownstreamSession#exit()} it. Waits at most the timeout for a session being opened.
   *
   * @throws DownstreamException naming why no session could be had
   */
  DownstreamSession acquire() {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      CompletableFuture<DownstreamSession> pending;
      synchronized (lock) {
        if (closed) {
          throw new DownstreamException("the agent is shutting down");
        }
        if (current != null && current.enter()) {
          return current;
        }
        current = null;
        if (opening == null) {
          if (failures > 1 && System.nanoTime() - retryAt < 0) {
            throw lastFailure;
          }
          opening = open();
        }
        pending = opening;
      }
      try {
        pending.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      } catch (TimeoutException e) {
        throw new DownstreamException(
            "timed out after " + timeout.toSeconds() + "s waiting for a connection");
      } catch (ExecutionException e) {
        throw failure(e.getCause());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new DownstreamException("interrupted while connecting");
      }
    }
  }

  /**
   * Starts opening a session on its own thread (a caller giving up does not stop it); the state is
   * updated before the future completes, so a caller woken by it finds the session current.
   */
  private CompletableFuture<DownstreamSession> open() {
    CompletableFuture<DownstreamSession> result = new CompletableFuture<>();
    OPENERS.execute(() -> {
      DownstreamSession session;
      try {
        session = opener.apply(this::retire);
      } catch (RuntimeException | Error e) {
        // an Error too, or the callers waiting on this opening would wait their full timeout and
        // none would ever start another
        opened(null, e);
        result.completeExceptionally(e);
        if (e instanceof Error error) {
          throw error;
        }
        return;
      }
      opened(session, null);
      result.complete(session);
    });
    return result;
  }

  private void opened(DownstreamSession session, Throwable error) {
    boolean orphan = false;
    synchronized (lock) {
      opening = null;
      if (error == null) {
        // failures are forgiven once the session answers a call (retire), not on opening: a
        // server that accepts sessions and loses each at once must still be backed off from
        if (closed) {
          orphan = true;
        } else {
          current = session;
          open.add(session);
        }
      } else {
        failed(failure(error));
      }
    }
    if (orphan) {
      session.close();
    }
  }

  /** Counts a failed opening (caller holds the lock) and sets when the next may start. */
  private void failed(DownstreamException why) {
    failures++;
    lastFailure = why;
    long backoff =
        failures == 1 ? 0 : Math.min(MAX_BACKOFF, FIRST_BACKOFF << Math.min(failures - 2, 20));
    retryAt = System.nanoTime() + backoff;
  }

  private DownstreamException failure(Throwable error) {
    Throwable cause =
        error instanceof CompletionException c && c.getCause() != null ? c.getCause() : error;
    return cause instanceof DownstreamException d
        ? d
        : new DownstreamException("cannot connect: " + Failures.describe(cause, timeout), cause);
  }

  /**
   * The server no longer knows {@code session}, or it was given up on too often: new calls get a
   * new session, the calls in flight finish on this one. A session gone before it answered anything
   * counts as a failed opening, so a server that loses every session is not reconnected in a loop.
   */
  void retire(DownstreamSession session) {
    synchronized (lock) {
      if (current == session) {
        current = null;
        LOG.info("{}: the MCP session ended; the next call opens a new one", name);
        if (session.answered()) {
          failures = 0;
        } else {
          failed(new DownstreamException("the server does not keep our MCP sessions"));
        }
      }
    }
    session.retire();
    open.removeIf(DownstreamSession::isClosed);
  }

  /** Closes every session, in use or not: the agent is shutting down. */
  @Override
  public void close() {
    synchronized (lock) {
      closed = true;
      current = null;
    }
    open.forEach(DownstreamSession::close);
    open.clear();
  }
}
