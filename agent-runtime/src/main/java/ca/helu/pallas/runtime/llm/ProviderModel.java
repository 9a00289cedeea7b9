package ca.helu.pallas.runtime.llm;

import ca.helu.pallas.api.Provider;
import ca.helu.pallas.api.ProviderSpec;
import ca.helu.pallas.api.RequestParams;
import ca.helu.pallas.runtime.Causes;
import ca.helu.pallas.runtime.config.Secrets;
import ca.helu.pallas.runtime.loop.Cancellation;
import ca.helu.pallas.runtime.loop.ModelClient;
import com.fasterxml.jackson.core.JsonProcessingException;
import dev.langchain4j.exception.HttpException;
import dev.langchain4j.exception.LangChain4jException;
import dev.langchain4j.model.anthropic.AnthropicChatModel;
import dev.langchain4j.model.anthropic.AnthropicStreamingChatModel;
import dev.langchain4j.model.anthropic.AnthropicTokenUsage;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.chat.StreamingChatModel;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.chat.response.StreamingChatResponseHandler;
import dev.langchain4j.model.openai.OpenAiChatModel;
import dev.langchain4j.model.openai.OpenAiStreamingChatModel;
import dev.langchain4j.model.openai.OpenAiTokenUsage;
import dev.langchain4j.model.output.TokenUsage;
import java.io.IOException;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An OpenAI-compatible or Anthropic model through LangChain4j's low-level ChatModel, one attempt
 * per call (429, 5xx, timeouts and unreadable answers are marked retryable for {@link
 * RetryingModel}), with the original's sampling-parameter matrix: a parameter the model rejects is
 * dropped with one warning and never sent. For a call whose client follows its progress, the same
 * request goes through the provider's streaming API (LangChain4j's StreamingChatModel), its text
 * handed on as it arrives (docs/runtime.md, "Streamed answers").
 */
public final class ProviderModel implements ModelClient {
  private static final Logger LOG = LoggerFactory.getLogger(ProviderModel.class);

  private final String provider;
  private final String model;
  private final ChatModel chat;
  private final StreamingChatModel streaming;
  private final Duration timeout;

  ProviderModel(String provider, String model, ChatModel chat, Duration timeout) {
    this(provider, model, chat, null, timeout);
  }

  /** {@code streaming}: the same model through the streaming API, or null (answers come whole). */
  ProviderModel(
      String provider,
      String model,
      ChatModel chat,
      StreamingChatModel streaming,
      Duration timeout) {
    this.provider = provider;
    this.model = model;
    this.chat = chat;
    this.streaming = streaming;
    this.timeout = timeout;
  }

  /**
   * Parameters a provider/model accepts, by the original Pallas' support matrix
   * (docs/configuration.md).
   */
  static Set<String> supportedParameters(Provider provider, String model) {
    return switch (provider) {
      case ANTHROPIC ->
          model.contains("opus-4-7") ? Set.of() : Set.of("temperature", "topP", "topK");
      // OpenAI-compatible chat completions (vLLM, llama.cpp, Ollama take top_k as an extra field)
      case OPENAI -> Set.of("temperature", "topP", "topK");
    };
  }

  public static ProviderModel create(
      Provider provider,
      String model,
      ProviderSpec spec,
      Secrets secrets,
      RequestParams params,
      Duration timeout,
      String agent) {
    Set<String> supported = supportedParameters(provider, model);
    Map<String, Object> wanted = new LinkedHashMap<>();
    if (params.temperature() != null) {
      wanted.put("temperature", params.temperature());
    }
    if (params.topP() != null) {
      wanted.put("topP", params.topP());
    }
    if (params.topK() != null) {
      wanted.put("topK", params.topK());
    }
    for (String p : wanted.keySet()) {
      if (!supported.contains(p)) {
        LOG.warn(
            "agent {}: model {}.{} does not accept {}; it is dropped and never sent",
            agent,
            provider.id(),
            model,
            p);
      }
    }
    wanted.keySet().retainAll(supported);
    String key = apiKey(provider, spec, secrets);
    String baseUrl = baseUrl(provider, spec, secrets);
    Double temperature = (Double) wanted.get("temperature");
    Double topP = (Double) wanted.get("topP");
    // the two APIs' builders share no type: each is given the same settings, streaming or not
    return switch (provider) {
      case OPENAI -> {
        // local OpenAI-compatible servers need no key; LangChain4j wants a non-blank one
        String openAiKey = key.isEmpty() ? "none" : key;
        Map<String, Object> topK =
            wanted.containsKey("topK") ? Map.of("top_k", wanted.get("topK")) : null;
        ChatModel chat =
            OpenAiChatModel.builder()
                .baseUrl(baseUrl)
                .apiKey(openAiKey)
                .modelName(model)
                .httpClientBuilder(ProviderHttpClient.builder())
                .timeout(timeout)
                .maxRetries(0)
                .temperature(temperature)
                .topP(topP)
                .maxTokens(params.maxTokens())
                .parallelToolCalls(null)
                .customParameters(topK)
                .build();
        StreamingChatModel streaming =
            OpenAiStreamingChatModel.builder()
                .baseUrl(baseUrl)
                .apiKey(openAiKey)
                .modelName(model)
                .httpClientBuilder(ProviderHttpClient.builder())
                .timeout(timeout)
                .temperature(temperature)
                .topP(topP)
                .maxTokens(params.maxTokens())
                .parallelToolCalls(null)
                .customParameters(topK)
                .build();
        yield new ProviderModel(provider.id(), model, chat, streaming, timeout);
      }
      case ANTHROPIC -> {
        Integer topK = (Integer) wanted.get("topK");
        int maxTokens = params.maxTokens() == null ? 4096 : params.maxTokens();
        ChatModel chat =
            AnthropicChatModel.builder()
                .baseUrl(baseUrl)
                .apiKey(key)
                .modelName(model)
                .httpClientBuilder(ProviderHttpClient.builder())
                .timeout(timeout)
                .maxRetries(0)
                .temperature(temperature)
                .topP(topP)
                .topK(topK)
                .maxTokens(maxTokens)
                .build();
        StreamingChatModel streaming =
            AnthropicStreamingChatModel.builder()
                .baseUrl(baseUrl)
                .apiKey(key)
                .modelName(model)
                .httpClientBuilder(ProviderHttpClient.builder())
                .timeout(timeout)
                .temperature(temperature)
                .topP(topP)
                .topK(topK)
                .maxTokens(maxTokens)
                .build();
        yield new ProviderModel(provider.id(), model, chat, streaming, timeout);
      }
    };
  }

  /**
   * Why a provider cannot be used as configured, or null. Anthropic always needs a key; an
   * OpenAI-compatible server (llama.cpp, vLLM, Ollama) may run without one.
   */
  public static String configurationProblem(Provider provider, ProviderSpec spec, Secrets secrets) {
    boolean needsKey =
        switch (provider) {
          case ANTHROPIC -> true;
          case OPENAI -> false;
        };
    if (needsKey && apiKey(provider, spec, secrets).isEmpty()) {
      return "no API key for "
          + provider.id()
          + ": set "
          + (spec != null && spec.apiKey() != null
              ? Secrets.describe(spec.apiKey())
              : provider.keyVariable() + " or " + provider.field() + ".apiKey");
    }
    return null;
  }

  static String baseUrl(Provider provider, ProviderSpec spec, Secrets secrets) {
    if (spec != null && spec.baseUrl() != null) {
      return spec.baseUrl();
    }
    return switch (provider) {
      // as OpenAI's own clients read it
      case OPENAI -> secrets.environment().get("OPENAI_BASE_URL").orElse(provider.defaultBaseUrl());
      case ANTHROPIC -> provider.defaultBaseUrl();
    };
  }

  static String apiKey(Provider provider, ProviderSpec spec, Secrets secrets) {
    if (spec != null && spec.apiKey() != null) {
      return secrets.resolve(spec.apiKey()).orElse("");
    }
    return secrets.environment().get(provider.keyVariable()).orElse("");
  }

  @Override
  public String provider() {
    return provider;
  }

  @Override
  public String modelName() {
    return model;
  }

  /**
   * One attempt, bounded as a whole by the LLM request timeout ({@link ProviderHttpClient}); a
   * failure says whether another may succeed and how long the provider asked to wait ({@link
   * RetryingModel} retries). An interrupt (the call stopped) aborts the request.
   */
  @Override
  public ChatResponse chat(ChatRequest request) {
    try {
      return chat.chat(request);
    } catch (RuntimeException e) {
      throw failure(e);
    }
  }

  /**
   * One attempt through the provider's streaming API, {@code text} given each piece of the answer's
   * text as it arrives; the response, its token counts and its failures as {@link
   * #chat(ChatRequest)}'s. {@link ProviderHttpClient} returns once the stream has ended (bounded by
   * the same timeout, aborted by the same interrupt), so an answer still incomplete then was cut
   * short: a failure, as a broken connection is.
   */
  @Override
  public ChatResponse chat(ChatRequest request, Cancellation cancellation, Consumer<String> text) {
    if (streaming == null) {
      return chat(request);
    }
    CompletableFuture<ChatResponse> answer = new CompletableFuture<>();
    try {
      streaming.chat(
          request,
          new StreamingChatResponseHandler() {
            @Override
            public void onPartialResponse(String piece) {
              if (!answer.isDone()) {
                text.accept(piece);
              }
            }

            @Override
            public void onCompleteResponse(ChatResponse response) {
              answer.complete(response);
            }

            @Override
            public void onError(Throwable error) {
              answer.completeExceptionally(error);
            }
          });
    } catch (RuntimeException e) {
      throw failure(e);
    }
    ChatResponse response;
    try {
      response = answer.getNow(null);
    } catch (CompletionException e) {
      throw failure(e.getCause() instanceof RuntimeException r ? r : e);
    }
    // Anthropic's stream completes at message_stop; OpenAI's ends with a finish reason: a stream
    // that stopped without them (a connection closed cleanly mid-answer) is not an answer
    if (response == null || response.finishReason() == null) {
      if (Thread.currentThread().isInterrupted()) {
        throw abandoned();
      }
      throw new LlmException(
          provider + "." + model + ": the answer's stream ended before the answer was complete",
          true);
    }
    return response;
  }

  /** A failed attempt in words, saying whether another may succeed. */
  private LlmException failure(RuntimeException e) {
    if (Thread.currentThread().isInterrupted()
        || Causes.find(e, CancellationException.class).isPresent()) {
      return abandoned();
    }
    return new LlmException(
        provider + "." + model + ": " + describe(e),
        retryable(e),
        Causes.find(e, ProviderHttpClient.Refused.class)
            .flatMap(ProviderHttpClient.Refused::retryAfter)
            .orElse(null));
  }

  private LlmException abandoned() {
    return new LlmException(provider + "." + model + ": the request was abandoned", false);
  }

  static boolean retryable(Throwable e) {
    int status = status(e);
    if (status > 0) {
      return status == 429 || status == 408 || status >= 500;
    }
    return true; // timeouts, connection errors, unreadable answers
  }

  private static int status(Throwable e) {
    return Causes.find(e, HttpException.class).map(HttpException::statusCode).orElse(-1);
  }

  /** A failure in words, never including credentials nor a library's class name. */
  String describe(Throwable e) {
    int status = status(e);
    if (status > 0) {
      return "HTTP " + status + (status == 401 || status == 403 ? " (check the API key)" : "");
    }
    if (Causes.any(
        e, HttpTimeoutException.class, TimeoutException.class, SocketTimeoutException.class)) {
      return "no complete answer within the LLM request timeout of " + timeout.toSeconds() + " s";
    }
    if (Causes.find(e, ConnectException.class).isPresent()) {
      return "unreachable (connection refused)";
    }
    if (Causes.find(e, JsonProcessingException.class).isPresent()) {
      return "returned a response that is not valid JSON";
    }
    if (Causes.find(e, IOException.class).isPresent()) {
      return "the connection failed before the answer was complete";
    }
    if (e instanceof LangChain4jException) {
      return "returned an unusable response";
    }
    LOG.warn("{}.{} failed unexpectedly", provider, model, e);
    return "failed unexpectedly (the agent's log has the details)";
  }

  @Override
  public Map<String, Long> tokensByKind(ChatResponse response) {
    Map<String, Long> kinds = ModelClient.super.tokensByKind(response);
    TokenUsage usage = response.tokenUsage();
    if (usage instanceof OpenAiTokenUsage openai) {
      if (openai.inputTokensDetails() != null
          && openai.inputTokensDetails().cachedTokens() != null
          && openai.inputTokensDetails().cachedTokens() > 0) {
        kinds.put("cache_read", openai.inputTokensDetails().cachedTokens().longValue());
      }
      if (openai.outputTokensDetails() != null
          && openai.outputTokensDetails().reasoningTokens() != null
          && openai.outputTokensDetails().reasoningTokens() > 0) {
        kinds.put("reasoning", openai.outputTokensDetails().reasoningTokens().longValue());
      }
    } else if (usage instanceof AnthropicTokenUsage anthropic) {
      if (anthropic.cacheReadInputTokens() != null && anthropic.cacheReadInputTokens() > 0) {
        kinds.put("cache_read", anthropic.cacheReadInputTokens().longValue());
      }
      if (anthropic.cacheCreationInputTokens() != null
          && anthropic.cacheCreationInputTokens() > 0) {
        kinds.put("cache_write", anthropic.cacheCreationInputTokens().longValue());
      }
    }
    return kinds;
  }
}
