package ca.helu.pallas.runtime.mcp;

import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.Writer;
import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The response of one call, as the MCP transport writes it: an SSE stream that gets a comment line
 * every heartbeat while the call runs (docs/runtime.md, "Deadlines and cancellation"). Undertow
 * notices a client that disconnected only when it writes to it, so the comment is how a call whose
 * client left is noticed: a write that fails calls {@code gone}, once. A comment is written only
 * between two of the SDK's events (all it has written is flushed), so it never splits one.
 */
final class CallStream extends HttpServletResponseWrapper implements AutoCloseable {
  /**
   * Times the heartbeats; each is written on a virtual thread, as a write may block. A cancelled
   * heartbeat leaves the queue at once: it holds its response until then.
   */
  private static final ScheduledExecutorService BEATS = timer("pallas-call-heartbeat");

  private static ScheduledExecutorService timer(String name) {
    ScheduledThreadPoolExecutor timer =
        new ScheduledThreadPoolExecutor(1, Thread.ofPlatform().daemon().name(name).factory());
    timer.setRemoveOnCancelPolicy(true);
    return timer;
  }

  private final Runnable gone;
  private final AtomicBoolean beating = new AtomicBoolean();
  private final ScheduledFuture<?> beats;
  private EventWriter events; // guarded by this
  private PrintWriter writer; // guarded by this
  private volatile boolean closed;

  CallStream(HttpServletResponse response, Duration heartbeat, Runnable gone) {
    super(response);
    this.gone = once(gone);
    long every = heartbeat.toNanos();
    this.beats =
        BEATS.scheduleWithFixedDelay(this::scheduleBeat, every, every, TimeUnit.NANOSECONDS);
  }

  private static Runnable once(Runnable action) {
    AtomicBoolean done = new AtomicBoolean();
    return () -> {
      if (done.compareAndSet(false, true)) {
        action.run();
      }
    };
  }

  @Override
  public synchronized PrintWriter getWriter() throws IOException {
    if (writer == null) {
      events = new EventWriter(super.getWriter(), gone);
      writer = new PrintWriter(events);
    }
    return writer;
  }

  private void scheduleBeat() {
    if (!closed && beating.compareAndSet(false, true)) {
      Thread.startVirtualThread(() -> {
        try {
          beat();
        } finally {
          beating.set(false);
        }
      });
    }
  }

  /** One comment, once the transport streams events (an answer of plain JSON gets none). */
  private void beat() {
    EventWriter out;
    synchronized (this) {
      out = events;
    }
    String type = getContentType();
    if (closed || out == null || type == null || !type.startsWith("text/event-stream")) {
      return;
    }
    try {
      if (!out.comment()) {
        gone.run();
      }
    } catch (RuntimeException e) {
      // the response ended meanwhile: nothing to keep alive
    }
  }

  /** The call has been answered (or has stopped): no more heartbeats. */
  @Override
  public void close() {
    closed = true;
    beats.cancel(false);
  }

  /**
   * The transport's writer, knowing whether an event is half written (written, not yet flushed: the
   * SDK writes an event's lines, then flushes). PrintWriter locks on it for each of its calls.
   */
  private static final class EventWriter extends Writer {
    private final PrintWriter out;
    private final Runnable gone;
    private boolean pending; // guarded by lock (this)
    private boolean broken; // guarded by lock (this)

    EventWriter(PrintWriter out, Runnable gone) {
      this.out = out;
      this.gone = gone;
    }

    @Override
    public void write(char[] buffer, int offset, int length) {
      synchronized (lock) {
        out.write(buffer, offset, length);
        pending = true;
      }
    }

    @Override
    public void write(String text, int offset, int length) {
      synchronized (lock) {
        out.write(text, offset, length);
        pending = true;
      }
    }

    @Override
    public void flush() throws IOException {
      synchronized (lock) {
        out.flush();
        pending = false;
        if (out.checkError()) {
          broken = true;
          // on a thread of its own: the stop's actions end the stream this writer writes to,
          // and PrintWriter holds this writer's lock around this call
          Thread.startVirtualThread(gone);
          throw new IOException("the client is gone");
        }
      }
    }

    @Override
    public void close() {
      synchronized (lock) {
        out.close();
      }
    }

    /** Writes an SSE comment between events; false once the client is found gone. */
    boolean comment() {
      synchronized (lock) {
        if (broken) {
          return false;
        }
        if (pending) {
          return true; // mid-event: the SDK's flush comes next, and the next beat
        }
        out.write(":\n\n");
        out.flush();
        broken = out.checkError();
        return !broken;
      }
    }
  }
}
