package ca.helu.pallas.runtime.loop;

import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.output.TokenUsage;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;

/** One LLM the agent loop talks to: a provider's model or a built-in test model. */
public interface ModelClient {
  /** Provider prefix: openai, anthropic, passthrough, playback, slow. */
  String provider();

  /** The model name as published in metrics and the registry. */
  String modelName();

  /** One LLM round-trip; throws with a clear, secret-free message when the provider fails. */
  ChatResponse chat(ChatRequest request);

  /**
   * One LLM round-trip for a call that may stop early: a client that retries waits only as long as
   * the turn's deadline allows (docs/runtime.md, "Deadlines and cancellation"). A stop interrupts
   * the calling thread, which aborts the request.
   */
  default ChatResponse chat(ChatRequest request, Cancellation cancellation) {
    return chat(request);
  }

  /**
   * One LLM round-trip whose answer's text is handed to {@code text} piece by piece as it arrives
   * (the provider's streaming API), for a call whose client follows its progress (docs/contract.md,
   * "Progress"). Otherwise as {@link #chat(ChatRequest, Cancellation)}: the same response, errors,
   * retries and deadline. A model that cannot stream answers whole and hands {@code text} nothing.
   */
  default ChatResponse chat(ChatRequest request, Cancellation cancellation, Consumer<String> text) {
    return chat(request, cancellation);
  }

  /**
   * Token counts of a response by the kinds of docs/metrics.md (input, output, cache_read, ...).
   */
  default Map<String, Long> tokensByKind(ChatResponse response) {
    Map<String, Long> kinds = new LinkedHashMap<>();
    TokenUsage usage = response.tokenUsage();
    if (usage != null) {
      if (usage.inputTokenCount() != null && usage.inputTokenCount() > 0) {
        kinds.put("input", usage.inputTokenCount().longValue());
      }
      if (usage.outputTokenCount() != null && usage.outputTokenCount() > 0) {
        kinds.put("output", usage.outputTokenCount().longValue());
      }
    }
    return kinds;
  }
}
