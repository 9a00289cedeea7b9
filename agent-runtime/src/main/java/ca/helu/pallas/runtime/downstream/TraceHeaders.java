package ca.helu.pallas.runtime.downstream;

import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import java.util.HashMap;
import java.util.Map;

/** The current span as W3C trace context entries ({@code traceparent}, {@code tracestate}). */
final class TraceHeaders {
  private TraceHeaders() {}

  /** Empty when no span is current (tracing off, or a call from outside any turn). */
  static Map<String, String> ofCurrentSpan() {
    Map<String, String> out = new HashMap<>(2);
    W3CTraceContextPropagator.getInstance().inject(Context.current(), out, Map::put);
    return out;
  }
}
