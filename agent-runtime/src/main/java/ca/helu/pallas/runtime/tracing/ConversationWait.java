package ca.helu.pallas.runtime.tracing;

import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A turn's wait for the earlier turns of its conversation, as a {@code wait conversation} span
 * (docs/observability.md, "Spans") only when the turn did wait: for turns ahead of it in this
 * process, or for one on another replica. A turn that goes ahead at once, as nearly every turn of a
 * connection's conversation does, gets no span: it would say nothing, at a span's cost on every
 * call (docs/benchmarks.md, "Authentication and tracing").
 */
public final class ConversationWait {
  /** Tracing off: nothing is recorded. */
  static final ConversationWait NONE = new ConversationWait(null, 0);

  private final Tracer tracer;
  private final Context parent;
  private final Instant began;
  private final int ahead;
  private final AtomicBoolean ended = new AtomicBoolean();
  private volatile boolean elsewhere;

  ConversationWait(Tracer tracer, int ahead) {
    this.tracer = tracer;
    this.ahead = ahead;
    this.parent = tracer == null ? null : Context.current();
    this.began = tracer == null ? null : Instant.now();
  }

  /** The turn waits for a turn of its conversation on another replica. */
  public void elsewhere() {
    elsewhere = true;
  }

  /** The wait is over: the turn runs, or its call stopped while it waited. Once only. */
  public void end() {
    if (tracer != null && (ahead > 0 || elsewhere) && ended.compareAndSet(false, true)) {
      tracer
          .spanBuilder("wait conversation")
          .setParent(parent)
          .setStartTimestamp(began)
          .setAttribute(SpanKeys.TURNS_AHEAD, ahead)
          .startSpan()
          .end(Instant.now());
    }
  }
}
