package ca.helu.pallas.runtime.tracing;

import static org.assertj.core.api.Assertions.assertThat;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A turn's wait is a span only when the turn did wait (docs/observability.md, "Spans"), under the
 * turn's span, once.
 */
class ConversationWaitTest {
  private final List<SpanData> exported = new CopyOnWriteArrayList<>();
  private final SdkTracerProvider provider =
      SdkTracerProvider.builder()
          .addSpanProcessor(
              SimpleSpanProcessor.create(
                  new SpanExporter() {
                    @Override
                    public CompletableResultCode export(Collection<SpanData> spans) {
                      exported.addAll(spans);
                      return CompletableResultCode.ofSuccess();
                    }

                    @Override
                    public CompletableResultCode flush() {
                      return CompletableResultCode.ofSuccess();
                    }

                    @Override
                    public CompletableResultCode shutdown() {
                      return CompletableResultCode.ofSuccess();
                    }
                  }))
          .build();
  private final Tracer tracer = provider.get("test");

  @AfterEach
  void close() {
    provider.close();
  }

  @Test
  void aTurnThatWentAheadAtOnceHasNoSpan() {
    new ConversationWait(tracer, 0).end();
    assertThat(exported).isEmpty();
  }

  @Test
  void aTurnBehindOthersHereHasOneSpanUnderItsTurn() {
    Span turn = tracer.spanBuilder("invoke_agent a").startSpan();
    ConversationWait wait;
    try (Scope current = turn.makeCurrent()) {
      wait = new ConversationWait(tracer, 2);
    }
    wait.end();
    wait.end();
    turn.end();
    assertThat(exported)
        .filteredOn(s -> s.getName().equals("wait conversation"))
        .singleElement()
        .satisfies(s -> {
          assertThat(s.getParentSpanId()).isEqualTo(turn.getSpanContext().getSpanId());
          assertThat(s.getAttributes().get(SpanKeys.TURNS_AHEAD)).isEqualTo(2L);
          assertThat(s.getEndEpochNanos()).isGreaterThanOrEqualTo(s.getStartEpochNanos());
        });
  }

  @Test
  void aTurnWaitingForAnotherReplicaHasASpan() {
    ConversationWait wait = new ConversationWait(tracer, 0);
    wait.elsewhere();
    wait.end();
    assertThat(exported)
        .singleElement()
        .satisfies(s -> {
          assertThat(s.getName()).isEqualTo("wait conversation");
          assertThat(s.getAttributes().get(SpanKeys.TURNS_AHEAD)).isZero();
        });
  }

  @Test
  void withTracingOffNothingIsMade() {
    ConversationWait wait = Tracing.OFF.conversationWait(3);
    wait.elsewhere();
    wait.end();
    assertThat(wait).isSameAs(ConversationWait.NONE);
  }
}
