package ca.helu.pallas.runtime.llm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ca.helu.pallas.runtime.loop.Cancellation;
import ca.helu.pallas.runtime.loop.ModelClient;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.output.TokenUsage;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The retry wrapper around a model client that fails as scripted, without waiting. */
class RetryingModelTest {
  private static final ChatRequest REQUEST =
      ChatRequest.builder().messages(UserMessage.from("hi")).build();
  private static final ChatResponse ANSWER =
      ChatResponse.builder()
          .aiMessage(AiMessage.from("hello"))
          .tokenUsage(new TokenUsage(3, 2))
          .build();

  private final List<Duration> slept = new ArrayList<>();

  /** Fails as scripted, then answers {@link #ANSWER}; a record, so it names itself. */
  private record Scripted(
      String provider, String modelName, Deque<RuntimeException> failures, AtomicInteger calls)
      implements ModelClient {
    Scripted(RuntimeException... failures) {
      this("openai", "m", new ArrayDeque<>(List.of(failures)), new AtomicInteger());
    }

    @Override
    public ChatResponse chat(ChatRequest request) {
      calls.incrementAndGet();
      if (!failures.isEmpty()) {
        throw failures.poll();
      }
      return ANSWER;
    }

    @Override
    public Map<String, Long> tokensByKind(ChatResponse response) {
      return Map.of("cache_read", 5L);
    }
  }

  private RetryingModel retrying(ModelClient model) {
    return new RetryingModel(
        model, new Retry(3, Duration.ofMillis(500), Duration.ofSeconds(10)), slept::add);
  }

  @Test
  void retryableFailuresAreRetriedWithDoublingBackoffUntilAnAnswer() {
    var model =
        new Scripted(
            new LlmException("openai.m: HTTP 503", true),
            new LlmException("openai.m: timed out after 10s", true));
    assertThat(retrying(model).chat(REQUEST)).isSameAs(ANSWER);
    assertThat(model.calls()).hasValue(3);
    assertThat(slept).containsExactly(Duration.ofMillis(500), Duration.ofMillis(1000));
  }

  @Test
  void theLastFailureReachesTheCallerUnchangedWhenAttemptsAreUsedUp() {
    LlmException last = new LlmException("openai.m: HTTP 429", true);
    var model =
        new Scripted(
            new LlmException("openai.m: HTTP 503", true),
            new LlmException("openai.m: HTTP 502", true),
            last);
    assertThatThrownBy(() -> retrying(model).chat(REQUEST)).isSameAs(last);
    assertThat(model.calls()).hasValue(3);
    assertThat(slept).hasSize(2);
  }

  @Test
  void aFailureThatRetryingCannotFixIsThrownAtOnce() {
    LlmException refused = new LlmException("openai.m: HTTP 401 (check the API key)", false);
    var model = new Scripted(refused);
    assertThatThrownBy(() -> retrying(model).chat(REQUEST)).isSameAs(refused);
    assertThat(model.calls()).hasValue(1);
    assertThat(slept).isEmpty();
  }

  @Test
  void failuresOtherThanLlmExceptionsAreNotRetried() {
    IllegalStateException bug = new IllegalStateException("interrupted");
    var model = new Scripted(bug);
    assertThatThrownBy(() -> retrying(model).chat(REQUEST)).isSameAs(bug);
    assertThat(model.calls()).hasValue(1);
  }

  @Test
  void aRetryAfterLongerThanTheBackoffIsWaitedInstead() {
    var model =
        new Scripted(
            new LlmException("openai.m: HTTP 429", true, Duration.ofSeconds(3)),
            new LlmException("openai.m: HTTP 503", true, Duration.ofMillis(100)));
    assertThat(retrying(model).chat(REQUEST)).isSameAs(ANSWER);
    // 3 s asked, then a wait shorter than the (doubled) backoff of 1 s
    assertThat(slept).containsExactly(Duration.ofSeconds(3), Duration.ofMillis(1000));
  }

  @Test
  void aWaitThatWouldPassTheTurnsDeadlineFailsAtOnceSayingSo() {
    var model = new Scripted(new LlmException("openai.m: HTTP 429", true, Duration.ofMinutes(5)));
    Cancellation call = new Cancellation();
    call.startDeadline(Duration.ofSeconds(30));
    assertThatThrownBy(() -> retrying(model).chat(REQUEST, call))
        .isInstanceOf(LlmException.class)
        .hasMessageStartingWith(
            "openai.m: HTTP 429; it asked to be retried after 300 s (Retry-After), past the"
                + " turn's deadline of 30 s (")
        .hasMessageEndingWith(" left)")
        .matches(e -> !((LlmException) e).retryable());
    assertThat(model.calls()).hasValue(1);
    assertThat(slept).isEmpty();
    call.finish();
  }

  @Test
  void aStoppedCallIsNotRetried() {
    var model = new Scripted(new LlmException("openai.m: HTTP 503", true));
    Cancellation call = new Cancellation();
    call.stop(Cancellation.Reason.CANCELLED);
    assertThatThrownBy(() -> retrying(model).chat(REQUEST, call)).isInstanceOf(LlmException.class);
    assertThat(model.calls()).hasValue(1);
    assertThat(slept).isEmpty();
  }

  @Test
  void theWrappedModelNamesItselfAndCountsTokens() {
    var model = retrying(new Scripted());
    assertThat(model.provider()).isEqualTo("openai");
    assertThat(model.modelName()).isEqualTo("m");
    assertThat(model.tokensByKind(ANSWER)).containsExactly(Map.entry("cache_read", 5L));
  }
}
