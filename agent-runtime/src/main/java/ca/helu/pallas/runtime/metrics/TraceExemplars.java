package ca.helu.pallas.runtime.metrics;

import io.opentelemetry.api.trace.Span;
import io.prometheus.metrics.tracer.common.SpanContext;

/**
 * The OpenTelemetry span a measurement is made in, as the Prometheus client's exemplar sampler asks
 * for it (docs/observability.md, "Exemplars"): a latency observed inside a sampled span may carry
 * that span's trace and span ids, which Grafana links to the trace.
 */
final class TraceExemplars implements SpanContext {
  @Override
  public String getCurrentTraceId() {
    io.opentelemetry.api.trace.SpanContext current = Span.current().getSpanContext();
    return current.isValid() ? current.getTraceId() : null;
  }

  @Override
  public String getCurrentSpanId() {
    io.opentelemetry.api.trace.SpanContext current = Span.current().getSpanContext();
    return current.isValid() ? current.getSpanId() : null;
  }

  @Override
  public boolean isCurrentSpanSampled() {
    return Span.current().getSpanContext().isSampled();
  }

  @Override
  public void markCurrentSpanAsExemplar() {
    // spans carry only the attributes docs/observability.md lists
  }
}
