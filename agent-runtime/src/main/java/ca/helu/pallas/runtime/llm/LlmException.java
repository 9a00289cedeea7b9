package ca.helu.pallas.runtime.llm;

/** An LLM call that failed after its retries; the message names provider, model and reason. */
public final class LlmException extends RuntimeException {
  public LlmException(String message) {
    super(message);
  }
}
