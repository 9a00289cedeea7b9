package ca.helu.pallas.runtime.llm;

/**
 * A failed LLM call; the message names provider, model and reason, never a credential. {@link
 * #retryable()} says whether trying again may help (429, 5xx, timeouts), for {@link RetryingModel}.
 */
public final class LlmException extends RuntimeException {
  private final boolean retryable;

  /** A failure that trying again cannot fix. */
  public LlmException(String message) {
    this(message, false);
  }

  public LlmException(String message, boolean retryable) {
    super(message);
    this.retryable = retryable;
  }

  public boolean retryable() {
    return retryable;
  }
}
