package ca.helu.pallas.runtime.tracing;

import ca.helu.pallas.runtime.loop.Cancellation;
import ca.helu.pallas.runtime.loop.ModelClient;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.output.FinishReason;
import dev.langchain4j.model.output.TokenUsage;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Scope;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * A model whose every LLM request is a span, after the OpenTelemetry GenAI semantic conventions
 * (docs/observability.md, "Spans"): {@code chat {model}}, a client span with the provider, the
 * model asked and the one that answered, the token counts and the finish reason; never a message, a
 * prompt or a key. The span is current while the request runs, so the provider's HTTP client sends
 * its {@code traceparent}.
 */
final class TracedModel implements ModelClient {
  private final ModelClient model;
  private final Tracer tracer;
  private final String spanName;

  TracedModel(ModelClient model, Tracer tracer) {
    this.model = model;
    this.tracer = tracer;
    this.spanName = "chat " + model.modelName();
  }

  @Override
  public String provider() {
    return model.provider();
  }

  @Override
  public String modelName() {
    return model.modelName();
  }

  @Override
  public ChatResponse chat(ChatRequest request) {
    return chat(request, null);
  }

  @Override
  public ChatResponse chat(ChatRequest request, Cancellation cancellation) {
    return traced(
        () -> cancellation == null ? model.chat(request) : model.chat(request, cancellation));
  }

  /** A streamed request is the same one span, from the request to the answer's last piece. */
  @Override
  public ChatResponse chat(ChatRequest request, Cancellation cancellation, Consumer<String> text) {
    return traced(() -> model.chat(request, cancellation, text));
  }

  private ChatResponse traced(Supplier<ChatResponse> request) {
    Span span =
        tracer
            .spanBuilder(spanName)
            .setSpanKind(SpanKind.CLIENT)
            .setAttribute(SpanKeys.OPERATION, "chat")
            .setAttribute(SpanKeys.PROVIDER, model.provider())
            .setAttribute(SpanKeys.REQUEST_MODEL, model.modelName())
            .startSpan();
    try (Scope current = span.makeCurrent()) {
      ChatResponse response = request.get();
      TokenUsage usage = response.tokenUsage();
      if (usage != null && usage.inputTokenCount() != null) {
        span.setAttribute(SpanKeys.INPUT_TOKENS, usage.inputTokenCount().longValue());
      }
      if (usage != null && usage.outputTokenCount() != null) {
        span.setAttribute(SpanKeys.OUTPUT_TOKENS, usage.outputTokenCount().longValue());
      }
      if (response.finishReason() != null) {
        span.setAttribute(SpanKeys.FINISH_REASONS, List.of(finishReason(response.finishReason())));
      }
      if (response.modelName() != null) {
        span.setAttribute(SpanKeys.RESPONSE_MODEL, response.modelName());
      }
      return response;
    } catch (RuntimeException e) {
      // the exception's type, not its message: a provider's error body may echo the request
      span.setAttribute(SpanKeys.ERROR_TYPE, e.getClass().getSimpleName());
      span.setStatus(StatusCode.ERROR);
      throw e;
    } finally {
      span.end();
    }
  }

  /** The semantic conventions' words for LangChain4j's finish reasons. */
  private static String finishReason(FinishReason reason) {
    return switch (reason) {
      case STOP -> "stop";
      case LENGTH -> "length";
      case TOOL_EXECUTION -> "tool_call";
      case CONTENT_FILTER -> "content_filter";
      default -> reason.name().toLowerCase(Locale.ROOT);
    };
  }

  @Override
  public Map<String, Long> tokensByKind(ChatResponse response) {
    return model.tokensByKind(response);
  }
}
