package ca.helu.pallas.runtime.tracing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ca.helu.pallas.api.SecretValue;
import ca.helu.pallas.api.SecretVariables;
import ca.helu.pallas.api.TracingSpec;
import ca.helu.pallas.runtime.config.Environment;
import ca.helu.pallas.runtime.loop.ModelClient;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.ChatResponse;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.context.Context;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** How the OTEL_* environment turns tracing on (docs/configuration.md, "Tracing"). */
class TracingTest {
  private static final ModelClient MODEL =
      new ModelClient() {
        @Override
        public String provider() {
          return "passthrough";
        }

        @Override
        public String modelName() {
          return "passthrough";
        }

        @Override
        public ChatResponse chat(ChatRequest request) {
          throw new UnsupportedOperationException();
        }
      };

  private static Tracing from(Map<String, String> env) {
    return Tracing.from(new Environment(env));
  }

  @Test
  void offWithoutAnEndpointAndThenAddsNothing() {
    Tracing tracing = from(Map.of("OTEL_SERVICE_NAME", "x", "OTEL_TRACES_SAMPLER_ARG", "0.5"));
    assertThat(tracing.on()).isFalse();
    assertThat(tracing).isSameAs(Tracing.OFF);
    assertThat(tracing.traced(MODEL)).isSameAs(MODEL);
    // a caller's traceparent starts nothing
    Context caller =
        tracing.callerContext(
            Map.of(), "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", null);
    assertThat(Span.fromContext(caller).getSpanContext().isValid()).isFalse();
  }

  @Test
  void onWithAnEndpointUnlessDisabled() {
    try (Tracing tracing = from(Map.of("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"))) {
      assertThat(tracing.on()).isTrue();
      assertThat(tracing.traced(MODEL)).isNotSameAs(MODEL);
    }
    assertThat(
            from(Map.of(
                    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                    "http://127.0.0.1:4318/v1/traces",
                    "OTEL_SDK_DISABLED",
                    "true"))
                .on())
        .isFalse();
  }

  @Test
  void theCallersMetaWinsOverItsHeaders() {
    try (Tracing tracing = from(Map.of("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"))) {
      Context caller =
          tracing.callerContext(
              Map.of("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"),
              "00-11111111111111111111111111111111-2222222222222222-01",
              null);
      assertThat(Span.fromContext(caller).getSpanContext().getTraceId())
          .isEqualTo("0af7651916cd43dd8448eb211c80319c");
      Context fromHeaders =
          tracing.callerContext(
              null, "00-11111111111111111111111111111111-2222222222222222-01", null);
      assertThat(Span.fromContext(fromHeaders).getSpanContext().getSpanId())
          .isEqualTo("2222222222222222");
      assertThat(Span.fromContext(tracing.callerContext(null, null, null)).getSpanContext())
          .as("neither: a new trace")
          .isEqualTo(SpanContext.getInvalid());
    }
  }

  @Test
  void aRatioOutOfRangeIsNamed() {
    assertThatThrownBy(() ->
            from(
                Map.of(
                    "OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318",
                    "OTEL_TRACES_SAMPLER_ARG", "1.5")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("OTEL_TRACES_SAMPLER_ARG")
        .hasMessageContaining("1.5");
  }

  @Test
  void headersAreReadAndAMalformedOneIsNamedWithoutItsValue() {
    assertThat(Tracing.headers("Authorization=Bearer%20t0k, x-tenant = a"))
        .containsExactly(Map.entry("Authorization", "Bearer t0k"), Map.entry("x-tenant", "a"));
    assertThatThrownBy(() ->
            from(
                Map.of(
                    "OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318",
                    "OTEL_EXPORTER_OTLP_HEADERS", "Authorization Bearer s3cret-token")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("OTEL_EXPORTER_OTLP_HEADERS")
        .hasMessageNotContaining("s3cret-token");
  }

  /** spec.tracing stands for the OTEL_* variables, under the process's own. */
  @Test
  void theManifestsTracingBlockIsTheDefaultOfTheEnvironment() {
    TracingSpec spec =
        new TracingSpec(
            "http://collector:4318", 0.25, 0.01, new SecretValue.SecretKeyRef("otel", "headers"));
    String variable = SecretVariables.nameFor(spec.headers());
    Environment env =
        Tracing.withManifest(
            new Environment(Map.of(variable, "authorization=Bearer%20tok-otel")), spec);
    assertThat(env.get("OTEL_EXPORTER_OTLP_ENDPOINT")).hasValue("http://collector:4318");
    assertThat(env.get("OTEL_TRACES_SAMPLER_ARG")).hasValue("0.25");
    assertThat(env.get(Tracing.HEALTH_RATIO)).hasValue("0.01");
    assertThat(env.get("OTEL_EXPORTER_OTLP_HEADERS")).hasValue("authorization=Bearer%20tok-otel");

    // a process given its own endpoint keeps its own settings whole
    Environment own =
        Tracing.withManifest(
            new Environment(Map.of("OTEL_EXPORTER_OTLP_ENDPOINT", "http://mine:4318")), spec);
    assertThat(own.get("OTEL_EXPORTER_OTLP_ENDPOINT")).hasValue("http://mine:4318");
    assertThat(own.get("OTEL_TRACES_SAMPLER_ARG")).isEmpty();

    // headers named but not given: refused naming the field and the Secret, not a value
    assertThatThrownBy(() -> Tracing.withManifest(new Environment(Map.of()), spec))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith(
            "spec.tracing.headers: the key 'headers' of Secret 'otel' is not given to this process");
  }
}
