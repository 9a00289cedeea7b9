package ca.helu.pallas.runtime.llm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import ca.helu.pallas.runtime.loop.Cancellation;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.exception.HttpException;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.chat.StreamingChatModel;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.chat.response.StreamingChatResponseHandler;
import dev.langchain4j.model.output.FinishReason;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * One provider call: a failure becomes an LlmException naming the model and saying if retryable.
 */
class ProviderModelTest {
  private static final ChatRequest REQUEST =
      ChatRequest.builder().messages(UserMessage.from("hi")).build();

  private final AtomicInteger calls = new AtomicInteger();

  private LlmException failureOf(RuntimeException cause) {
    ChatModel failing =
        new ChatModel() {
          @Override
          public ChatResponse chat(ChatRequest request) {
            calls.incrementAndGet();
            throw cause;
          }
        };
    var model = new ProviderModel("openai", "m", failing, Duration.ofSeconds(7));
    return catchThrowableOfType(LlmException.class, () -> model.chat(REQUEST));
  }

  @Test
  void aServerErrorIsRetryableAndNamesTheModel() {
    LlmException e = failureOf(new HttpException(503, "busy"));
    assertThat(e).hasMessage("openai.m: HTTP 503");
    assertThat(e.retryable()).isTrue();
  }

  @Test
  void aRefusedKeyIsNotRetryableAndSaysWhatToCheck() {
    LlmException e = failureOf(new HttpException(401, "sk-secret is invalid"));
    assertThat(e).hasMessage("openai.m: HTTP 401 (check the API key)");
    assertThat(e.retryable()).isFalse();
  }

  @Test
  void timeoutsAndRefusedConnectionsAreRetryable() {
    LlmException timeout = failureOf(new RuntimeException(new HttpTimeoutException("slow")));
    assertThat(timeout)
        .hasMessage("openai.m: no complete answer within the LLM request timeout of 7 s");
    assertThat(timeout.retryable()).isTrue();
    LlmException refused = failureOf(new RuntimeException(new ConnectException()));
    assertThat(refused).hasMessage("openai.m: unreachable (connection refused)");
    assertThat(refused.retryable()).isTrue();
  }

  @Test
  void aRefusalCarriesTheWaitTheProviderAskedFor() {
    LlmException e =
        failureOf(new ProviderHttpClient.Refused(429, "slow down", Duration.ofSeconds(2)));
    assertThat(e).hasMessage("openai.m: HTTP 429");
    assertThat(e.retryAfter()).contains(Duration.ofSeconds(2));
  }

  @Test
  void aBrokenConnectionOrAnUnexpectedFailureNamesNoClass() {
    LlmException broken =
        failureOf(
            new UncheckedIOException(
                new IOException("fixed content-length: 9, bytes received: 3")));
    assertThat(broken).hasMessage("openai.m: the connection failed before the answer was complete");
    assertThat(broken.retryable()).isTrue();
    LlmException odd = failureOf(new RuntimeException("java.lang.Something went wrong"));
    assertThat(odd).hasMessage("openai.m: failed unexpectedly (the agent's log has the details)");
  }

  @Test
  void eachCallIsOneAttempt() {
    failureOf(new HttpException(503, "busy"));
    assertThat(calls).hasValue(1);
  }

  /** A streaming model that hands its pieces, then ends as {@code end} says. */
  private static ProviderModel streaming(
      List<String> pieces, java.util.function.Consumer<StreamingChatResponseHandler> end) {
    StreamingChatModel model =
        new StreamingChatModel() {
          @Override
          public void doChat(ChatRequest request, StreamingChatResponseHandler handler) {
            pieces.forEach(handler::onPartialResponse);
            end.accept(handler);
          }
        };
    return new ProviderModel("anthropic", "m", null, model, Duration.ofSeconds(7));
  }

  @Test
  void aStreamedAnswerHandsItsPiecesInOrderAndReturnsTheWholeResponse() {
    ChatResponse whole =
        ChatResponse.builder()
            .aiMessage(AiMessage.from("Hello, world"))
            .finishReason(FinishReason.STOP)
            .build();
    List<String> seen = new ArrayList<>();
    ChatResponse response =
        streaming(List.of("Hel", "lo, ", "world"), h -> h.onCompleteResponse(whole))
            .chat(REQUEST, new Cancellation(), seen::add);
    assertThat(seen).containsExactly("Hel", "lo, ", "world");
    assertThat(response).isSameAs(whole);
  }

  @Test
  void aStreamThatEndsWithoutItsEndOrWithAnErrorIsAClearFailure() {
    LlmException cut =
        catchThrowableOfType(
            LlmException.class,
            () -> streaming(List.of("Hel"), h -> {}).chat(REQUEST, new Cancellation(), p -> {}));
    assertThat(cut)
        .hasMessage("anthropic.m: the answer's stream ended before the answer was complete");
    assertThat(cut.retryable()).isTrue();
    LlmException refused =
        catchThrowableOfType(
            LlmException.class,
            () ->
                streaming(List.of(), h -> h.onError(new HttpException(401, "sk-ant-secret bad")))
                    .chat(REQUEST, new Cancellation(), p -> {}));
    assertThat(refused).hasMessage("anthropic.m: HTTP 401 (check the API key)");
    assertThat(refused.retryable()).isFalse();
  }
}
