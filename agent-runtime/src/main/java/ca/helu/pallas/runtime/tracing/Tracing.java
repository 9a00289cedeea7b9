package ca.helu.pallas.runtime.tracing;

import ca.helu.pallas.api.SecretVariables;
import ca.helu.pallas.api.TracingSpec;
import ca.helu.pallas.runtime.config.Environment;
import ca.helu.pallas.runtime.loop.ModelClient;
import ca.helu.pallas.runtime.loop.ToolServer;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporterBuilder;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.export.BatchSpanProcessor;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * The runtime's traces (docs/observability.md, "Traces"): the OpenTelemetry SDK exporting OTLP over
 * HTTP/protobuf, configured by the standard {@code OTEL_*} environment variables, and off (a no-op
 * tracer, no exporter, no thread) unless an OTLP endpoint is set. Built once per process and passed
 * to whatever makes spans; context travels in OpenTelemetry's {@link Context}, which the code that
 * hands work to another thread carries over.
 */
public final class Tracing implements AutoCloseable {
  /** No traces: spans cost a no-op call, nothing is exported. */
  public static final Tracing OFF = new Tracing(null, OpenTelemetry.noop().getTracer("pallas"));

  static final String SCOPE = "ca.helu.pallas.runtime";

  /** The share of get_health calls traced, 0 to 1, default 0 (docs/configuration.md, "Tracing"). */
  public static final String HEALTH_RATIO = "PALLAS_TRACES_HEALTH_RATIO";

  private static final TextMapGetter<Map<String, String>> FROM_MAP =
      new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(Map<String, String> carrier) {
          return carrier.keySet();
        }

        @Override
        public String get(Map<String, String> carrier, String key) {
          return carrier == null ? null : carrier.get(key);
        }
      };

  private final SdkTracerProvider provider;
  private final Tracer tracer;

  private Tracing(SdkTracerProvider provider, Tracer tracer) {
    this.provider = provider;
    this.tracer = tracer;
  }

  /**
   * {@code env} with the variables a manifest's {@code spec.tracing} stands for underneath it
   * (docs/configuration.md, "Tracing"): its endpoint, its sampling ratio and its headers, which the
   * operator gives the pod from their Secret as {@code PALLAS_SECRET_*} (SecretVariables). A
   * process given an endpoint of its own keeps its own settings whole.
   */
  public static Environment withManifest(Environment env, TracingSpec spec) {
    if (spec == null
        || nonBlank(env, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").isPresent()
        || nonBlank(env, "OTEL_EXPORTER_OTLP_ENDPOINT").isPresent()) {
      return env;
    }
    Map<String, String> defaults = new HashMap<>();
    defaults.put("OTEL_EXPORTER_OTLP_ENDPOINT", spec.endpoint());
    if (spec.samplingRatio() != null) {
      defaults.put("OTEL_TRACES_SAMPLER_ARG", String.valueOf(spec.samplingRatio()));
    }
    if (spec.healthSamplingRatio() != null) {
      defaults.put(HEALTH_RATIO, String.valueOf(spec.healthSamplingRatio()));
    }
    if (spec.headers() != null) {
      String variable = SecretVariables.nameFor(spec.headers());
      defaults.put(
          "OTEL_EXPORTER_OTLP_HEADERS",
          nonBlank(env, variable)
              .orElseThrow(() ->
                  new IllegalArgumentException(
                      "spec.tracing.headers: the key '"
                          + spec.headers().key()
                          + "' of Secret '"
                          + spec.headers().name()
                          + "' is not given to this process (set "
                          + variable
                          + "; on a cluster the operator sets it)")));
    }
    return env.withDefaults(defaults);
  }

  /**
   * Tracing as the environment configures it (docs/configuration.md, "Tracing"): on when {@code
   * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT} or {@code OTEL_EXPORTER_OTLP_ENDPOINT} is set and {@code
   * OTEL_SDK_DISABLED} is not true. A value that cannot be used fails startup with a message naming
   * the variable (never a header's value: it may be a token).
   */
  public static Tracing from(Environment env) {
    Optional<String> endpoint = endpoint(env);
    if (endpoint.isEmpty()) {
      return OFF;
    }
    OtlpHttpSpanExporterBuilder exporter;
    try {
      exporter = OtlpHttpSpanExporter.builder().setEndpoint(endpoint.get());
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "OTEL_EXPORTER_OTLP_ENDPOINT: not an http(s) URL: " + endpoint.get());
    }
    Optional<String> headers =
        nonBlank(env, "OTEL_EXPORTER_OTLP_TRACES_HEADERS")
            .or(() -> nonBlank(env, "OTEL_EXPORTER_OTLP_HEADERS"));
    headers.map(Tracing::headers).ifPresent(h -> h.forEach(exporter::addHeader));
    double ratio = ratio(env, "OTEL_TRACES_SAMPLER_ARG", 1, "a sampling ratio");
    Duration delay =
        nonBlank(env, "OTEL_BSP_SCHEDULE_DELAY")
            .map(ms -> Duration.ofMillis(number("OTEL_BSP_SCHEDULE_DELAY", ms)))
            .orElse(Duration.ofSeconds(5));
    String service = nonBlank(env, "OTEL_SERVICE_NAME").orElse("pallas");
    SdkTracerProvider provider =
        SdkTracerProvider.builder()
            .setResource(
                Resource.getDefault()
                    .merge(
                        Resource.create(
                            Attributes.of(AttributeKey.stringKey("service.name"), service))))
            // a caller's decision is kept: a sampled call is traced through every agent;
            // get_health calls are sampled apart
            .setSampler(
                new HealthApartSampler(
                    ratio, ratio(env, HEALTH_RATIO, 0, "the share of get_health calls traced")))
            .addSpanProcessor(
                BatchSpanProcessor.builder(exporter.build()).setScheduleDelay(delay).build())
            .build();
    return new Tracing(provider, provider.get(SCOPE));
  }

  /** Whether the environment turns tracing on, as {@link #from} reads it. */
  public static boolean configured(Environment env) {
    return endpoint(env).isPresent();
  }

  /** Where spans go, or empty: tracing is off (OTEL_SDK_DISABLED, or no endpoint). */
  private static Optional<String> endpoint(Environment env) {
    if (env.get("OTEL_SDK_DISABLED").map(String::strip).orElse("").equalsIgnoreCase("true")) {
      return Optional.empty();
    }
    return nonBlank(env, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        .or(() ->
            nonBlank(env, "OTEL_EXPORTER_OTLP_ENDPOINT")
                .map(base -> base.replaceAll("/+$", "") + "/v1/traces"));
  }

  private static Optional<String> nonBlank(Environment env, String name) {
    return env.get(name).map(String::strip).filter(v -> !v.isEmpty());
  }

  /**
   * A share of calls traced, 0 to 1: {@code OTEL_TRACES_SAMPLER_ARG} for new traces (default 1),
   * {@link #HEALTH_RATIO} for get_health calls (default 0).
   */
  private static double ratio(Environment env, String name, double fallback, String what) {
    Optional<String> arg = nonBlank(env, name);
    if (arg.isEmpty()) {
      return fallback;
    }
    double ratio;
    try {
      ratio = Double.parseDouble(arg.get());
    } catch (NumberFormatException e) {
      ratio = Double.NaN;
    }
    if (!(ratio >= 0 && ratio <= 1)) {
      throw new IllegalArgumentException(
          name + ": " + what + " from 0 to 1 is expected, got '" + arg.get() + "'");
    }
    return ratio;
  }

  private static long number(String name, String value) {
    try {
      long n = Long.parseLong(value);
      if (n > 0) {
        return n;
      }
    } catch (NumberFormatException e) {
      // named below
    }
    throw new IllegalArgumentException(
        name + ": a positive number of milliseconds is expected, got '" + value + "'");
  }

  /** {@code key=value,key2=value2}, values URL-encoded (the OTLP exporter specification). */
  static Map<String, String> headers(String spec) {
    Map<String, String> out = new LinkedHashMap<>();
    for (String pair : spec.split(",")) {
      int eq = pair.indexOf('=');
      if (eq <= 0) {
        // the value is never shown: it may be a token
        throw new IllegalArgumentException(
            "OTEL_EXPORTER_OTLP_HEADERS: each entry must be name=value");
      }
      out.put(
          pair.substring(0, eq).strip(),
          URLDecoder.decode(pair.substring(eq + 1).strip(), StandardCharsets.UTF_8));
    }
    return out;
  }

  /** Whether spans are recorded and exported. */
  public boolean on() {
    return provider != null;
  }

  public Tracer tracer() {
    return tracer;
  }

  /**
   * The context a caller sent: W3C {@code traceparent}/{@code tracestate} from the request's MCP
   * {@code params._meta} when it has them, else from its HTTP headers ({@code null} when absent;
   * docs/observability.md, "Context propagation"). The root context when neither has one, or
   * tracing is off.
   */
  public Context callerContext(Map<String, ?> meta, String traceparent, String tracestate) {
    if (!on()) {
      return Context.root();
    }
    if (meta != null && meta.get("traceparent") instanceof String fromMeta) {
      return extract(fromMeta, meta.get("tracestate") instanceof String state ? state : null);
    }
    return traceparent == null ? Context.root() : extract(traceparent, tracestate);
  }

  private static Context extract(String traceparent, String tracestate) {
    Map<String, String> carrier = new HashMap<>(2);
    carrier.put("traceparent", traceparent);
    if (tracestate != null) {
      carrier.put("tracestate", tracestate);
    }
    return W3CTraceContextPropagator.getInstance().extract(Context.root(), carrier, FROM_MAP);
  }

  /**
   * A turn's wait for its conversation, {@code ahead} turns before it in this process: a span if it
   * did wait (ConversationWait).
   */
  public ConversationWait conversationWait(int ahead) {
    return on() ? new ConversationWait(tracer, ahead) : ConversationWait.NONE;
  }

  /** {@code model} with a span for each LLM request (off: {@code model} itself). */
  public ModelClient traced(ModelClient model) {
    return on() ? new TracedModel(model, tracer) : model;
  }

  /**
   * {@code server} with a span for each tool call (off: {@code server} itself); {@code peer} when
   * the server is another agent of the fleet.
   */
  public ToolServer traced(ToolServer server, String url, boolean peer) {
    return on() ? new TracedToolServer(server, url, peer, tracer) : server;
  }

  /**
   * Exports the spans ended so far, waiting for the export (up to 5 s): a benchmark counts the CPU
   * of a call's export with the call (docs/benchmarks.md, "Authentication and tracing").
   */
  public void flush() {
    if (provider != null) {
      provider.forceFlush().join(5, TimeUnit.SECONDS);
    }
  }

  /** Exports the spans still buffered and stops the exporter. */
  @Override
  public void close() {
    if (provider != null) {
      provider.shutdown().join(5, TimeUnit.SECONDS);
    }
  }
}
