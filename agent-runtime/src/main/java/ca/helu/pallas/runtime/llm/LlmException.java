package ca.helu.pallas.runtime.llm;

import java.time.Duration;
import java.util.Optional;

/**
 * A failed LLM call; the message names provider, model and reason, never a credential. {@link
 * #retryable()} says whether trying again may help (429, 5xx, timeouts), for {@link RetryingModel},
 * and {@link #retryAfter()} how long the provider asked to wait first ({@code Retry-After}).
 */
public final class LlmException extends RuntimeException {
  private final boolean retryable;
  private final transient Duration retryAfter;

  /** A failure that trying again cannot fix. */
  public LlmException(String message) {
    this(message, false);
  }

  public LlmException(String message, boolean retryable) {
    this(message, retryable, null);
  }

  public LlmException(String message, boolean retryable, Duration retryAfter) {
    super(message);
    this.retryable = retryable;
    this.retryAfter = retryAfter;
  }

  public boolean retryable() {
    return retryable;
  }

  /** The wait the provider asked for before another request, if it did. */
  public Optional<Duration> retryAfter() {
    return Optional.ofNullable(retryAfter);
  }
}
