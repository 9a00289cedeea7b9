package ca.helu.pallas.runtime.llm;

import ca.helu.pallas.runtime.loop.ModelClient;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.ChatResponse;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Any model client with bounded retries: a call failing with a retryable {@link LlmException} is
 * tried again by the {@link Retry} policy; the last failure reaches the caller unchanged.
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
    return retry.run(
        () -> model.chat(request),
        e -> e instanceof LlmException failure && failure.retryable(),
        (attempt, e) -> LOG.info("attempt {} failed ({}); retrying", attempt, e.getMessage()),
        sleeper);
  }

  @Override
  public Map<String, Long> tokensByKind(ChatResponse response) {
    return model.tokensByKind(response);
  }
}
