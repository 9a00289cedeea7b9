package ca.helu.pallas.runtime.tracing;

import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.context.Context;
import io.opentelemetry.sdk.trace.data.LinkData;
import io.opentelemetry.sdk.trace.samplers.Sampler;
import io.opentelemetry.sdk.trace.samplers.SamplingResult;
import java.util.List;

/**
 * Samples {@code get_health} calls apart from the others (docs/observability.md, "Spans"): Daedalus
 * polls every agent's health every minute, so at the calls' ratio health checks would fill the
 * traces. A {@code get_health} server span is sampled at its own ratio (0, none, by default),
 * whatever its caller decided; every other span keeps its caller's decision and samples new traces
 * at the calls' ratio.
 */
final class HealthApartSampler implements Sampler {
  private final Sampler calls;
  private final Sampler health;

  HealthApartSampler(double ratio, double healthRatio) {
    this.calls = Sampler.parentBased(Sampler.traceIdRatioBased(ratio));
    this.health = Sampler.traceIdRatioBased(healthRatio);
  }

  @Override
  public SamplingResult shouldSample(
      Context parentContext,
      String traceId,
      String name,
      SpanKind spanKind,
      Attributes attributes,
      List<LinkData> parentLinks) {
    Sampler which =
        spanKind == SpanKind.SERVER && "get_health".equals(attributes.get(SpanKeys.TOOL))
            ? health
            : calls;
    return which.shouldSample(parentContext, traceId, name, spanKind, attributes, parentLinks);
  }

  @Override
  public String getDescription() {
    return "HealthApart{calls="
        + calls.getDescription()
        + ",health="
        + health.getDescription()
        + "}";
  }
}
