package ca.helu.pallas.runtime.llm;

import ca.helu.pallas.runtime.loop.Cancellation;
import ca.helu.pallas.runtime.loop.ModelClient;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.ChatResponse;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Any model client with bounded retries: a call failing with a retryable {@link LlmException} is
 * tried again by the {@link Retry} policy, after the provider's {@code Retry-After} when it is
 * longer than the backoff, and only while the turn's deadline leaves room for the wait
 * (docs/runtime.md, "Deadlines and cancellation"): a wait that would pass it fails the call at
 * once, saying so. Otherwise the last failure reaches the caller unchanged.
 */
public final class RetryingModel implements ModelClient {
  private static final Logger LOG = LoggerFactory.getLogger(RetryingModel.class);

  private final ModelClient model;
  private final Retry retry;
  private final Retry.Sleeper sleeper;

  public RetryingModel(ModelClient model, Retry retry) {
    this(model, retry, Thread::sleep);
  }

  RetryingModel(ModelClient model, Retry retry, Retry.Sleeper sleeper) {
    this.model = model;
    this.retry = retry;
    this.sleeper = sleeper;
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
    return chat(request, new Cancellation());
  }

  @Override
  public ChatResponse chat(ChatRequest request, Cancellation call) {
    return chat(request, call, null);
  }

  /**
   * As {@link #chat(ChatRequest, Cancellation)}, the answer's text streamed to {@code text} (when
   * not null). A streamed attempt is retried only while none of its text reached {@code text}: the
   * caller has seen that text, and another attempt would write a different answer after it, so a
   * failure past the first piece reaches the caller at once (docs/runtime.md, "Streamed answers").
   */
  @Override
  public ChatResponse chat(ChatRequest request, Cancellation call, Consumer<String> text) {
    Duration backoff = retry.backoff();
    for (int attempt = 1; ; attempt++) {
      AtomicBoolean relayed = new AtomicBoolean();
      try {
        return text == null
            ? model.chat(request, call)
            : model.chat(
                request,
                call,
                piece -> {
                  relayed.set(true);
                  text.accept(piece);
                });
      } catch (LlmException e) {
        if (!e.retryable() || relayed.get() || attempt >= retry.attempts() || call.stopped()) {
          throw e;
        }
        Duration asked = e.retryAfter().orElse(Duration.ZERO);
        Duration wait = asked.compareTo(backoff) > 0 ? asked : backoff;
        Duration left = call.remaining();
        if (left != null && wait.compareTo(left) >= 0) {
          throw new LlmException(
              e.getMessage()
                  + "; "
                  + (asked.compareTo(backoff) > 0
                      ? "it asked to be retried after " + seconds(wait) + " (Retry-After)"
                      : "the next attempt would start in " + seconds(wait))
                  + ", past the turn's deadline of "
                  + seconds(call.deadline())
                  + " ("
                  + seconds(left)
                  + " left)",
              false);
        }
        LOG.info("attempt {} failed ({}); retrying in {}", attempt, e.getMessage(), seconds(wait));
        try {
          sleeper.sleep(wait);
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
          throw e;
        }
        backoff = backoff.multipliedBy(2);
      }
    }
  }

  /** A duration in seconds as people read it: "30 s", "0.5 s". */
  static String seconds(Duration d) {
    long millis = d == null ? 0 : d.toMillis();
    if (millis < 1000) {
      return millis + " ms";
    }
    return millis % 1000 == 0
        ? millis / 1000 + " s"
        : String.format(Locale.ROOT, "%.1f s", millis / 1000.0);
  }

  @Override
  public Map<String, Long> tokensByKind(ChatResponse response) {
    return model.tokensByKind(response);
  }
}
