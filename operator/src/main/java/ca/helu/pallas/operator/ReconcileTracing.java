package ca.helu.pallas.operator;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.javaoperatorsdk.operator.api.monitoring.Metrics;
import io.javaoperatorsdk.operator.api.reconciler.RetryInfo;
import io.javaoperatorsdk.operator.processing.Controller;
import io.javaoperatorsdk.operator.processing.event.Event;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.autoconfigure.AutoConfiguredOpenTelemetrySdk;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * The operator's reconciles as traces (docs/observability.md, "The operator's traces"): each
 * reconcile or cleanup of a PallasDeployment is one span, through JOSDK's monitoring hook, so a
 * slow rollout can be read span by span. Configured by the standard OTEL_* variables (the chart's
 * {@code tracing} values set them); off, and costing nothing, when no OTLP endpoint is named. Every
 * other monitoring call goes to the metrics it wraps.
 */
final class ReconcileTracing implements Metrics, AutoCloseable {
  private final Metrics metrics;
  private final OpenTelemetrySdk sdk; // null: not traced
  private final Tracer tracer;

  private ReconcileTracing(Metrics metrics, OpenTelemetrySdk sdk) {
    this.metrics = metrics;
    this.sdk = sdk;
    this.tracer = (sdk == null ? OpenTelemetry.noop() : sdk).getTracer("pallas-operator");
  }

  /**
   * Traces when {@code otel} names an OTLP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT or
   * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT); the rest of the standard variables (headers, sampler,
   * service name) as the OpenTelemetry SDK reads them; traces only, over HTTP.
   */
  static ReconcileTracing of(Metrics metrics, Map<String, String> otel) {
    if (!otel.containsKey("OTEL_EXPORTER_OTLP_ENDPOINT")
        && !otel.containsKey("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")) {
      return new ReconcileTracing(metrics, null);
    }
    Map<String, String> properties = new TreeMap<>();
    properties.put("otel.service.name", "pallas-operator");
    properties.put("otel.exporter.otlp.protocol", "http/protobuf");
    properties.put("otel.metrics.exporter", "none");
    properties.put("otel.logs.exporter", "none");
    // OTEL_FOO_BAR is otel.foo.bar (the SDK's own mapping), taken from the given variables only
    otel.forEach((k, v) -> properties.put(k.toLowerCase(Locale.ROOT).replace('_', '.'), v));
    OpenTelemetrySdk sdk =
        AutoConfiguredOpenTelemetrySdk.builder()
            .disableShutdownHook()
            .addPropertiesSupplier(() -> properties)
            .build()
            .getOpenTelemetrySdk();
    return new ReconcileTracing(metrics, sdk);
  }

  @Override
  public <T> T timeControllerExecution(ControllerExecution<T> execution) throws Exception {
    ResourceID id = execution.resourceID();
    Span span =
        tracer
            .spanBuilder(execution.name() + " " + execution.controllerName())
            .setAttribute("k8s.namespace.name", id.getNamespace().orElse(""))
            .setAttribute("pallas.deployment", id.getName())
            .startSpan();
    try (Scope current = span.makeCurrent()) {
      T result = metrics.timeControllerExecution(execution);
      span.setAttribute("pallas.outcome", execution.successTypeName(result));
      return result;
    } catch (Exception e) {
      // a kind, never the error's text (it may quote a manifest): docs/observability.md
      span.setAttribute("error.type", e.getClass().getSimpleName());
      span.setStatus(StatusCode.ERROR);
      throw e;
    } finally {
      span.end();
    }
  }

  @Override
  public void controllerRegistered(Controller<? extends HasMetadata> controller) {
    metrics.controllerRegistered(controller);
  }

  @Override
  public void receivedEvent(Event event, Map<String, Object> metadata) {
    metrics.receivedEvent(event, metadata);
  }

  @Override
  public void reconcileCustomResource(
      HasMetadata resource, RetryInfo retryInfo, Map<String, Object> metadata) {
    metrics.reconcileCustomResource(resource, retryInfo, metadata);
  }

  @Override
  public void failedReconciliation(
      HasMetadata resource, Exception exception, Map<String, Object> metadata) {
    metrics.failedReconciliation(resource, exception, metadata);
  }

  @Override
  public void reconciliationExecutionStarted(HasMetadata resource, Map<String, Object> metadata) {
    metrics.reconciliationExecutionStarted(resource, metadata);
  }

  @Override
  public void reconciliationExecutionFinished(HasMetadata resource, Map<String, Object> metadata) {
    metrics.reconciliationExecutionFinished(resource, metadata);
  }

  @Override
  public void cleanupDoneFor(ResourceID resourceID, Map<String, Object> metadata) {
    metrics.cleanupDoneFor(resourceID, metadata);
  }

  @Override
  public void finishedReconciliation(HasMetadata resource, Map<String, Object> metadata) {
    metrics.finishedReconciliation(resource, metadata);
  }

  @Override
  public <T extends Map<?, ?>> T monitorSizeOf(T map, String name) {
    return metrics.monitorSizeOf(map, name);
  }

  /** Exports what is left. */
  @Override
  public void close() {
    if (sdk != null) {
      sdk.close();
    }
  }
}
