package ca.helu.pallas.runtime.llm;

import dev.langchain4j.exception.HttpException;
import dev.langchain4j.exception.TimeoutException;
import dev.langchain4j.http.client.HttpClient;
import dev.langchain4j.http.client.HttpClientBuilder;
import dev.langchain4j.http.client.HttpRequest;
import dev.langchain4j.http.client.SuccessfulHttpResponse;
import dev.langchain4j.http.client.sse.ServerSentEventListener;
import dev.langchain4j.http.client.sse.ServerSentEventParser;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * LangChain4j's HTTP client SPI over the JDK's client, with what LangChain4j's own JDK client
 * (1.19) lacks (docs/runtime.md, "Deadlines and cancellation"):
 *
 * <ul>
 *   <li>the timeout bounds the whole answer, from sending the request to its last byte: the JDK's
 *       request timeout ends once the response headers arrive, so a provider that trickled its
 *       body, or stalled after its headers, held a call as long as it liked;
 *   <li>an interrupt of the calling thread (a call that stopped) aborts the request, which closes
 *       its connection, instead of leaving it to run on;
 *   <li>a refusal carries the provider's {@code Retry-After} ({@link Refused}).
 * </ul>
 */
final class ProviderHttpClient implements HttpClient {
  private final java.net.http.HttpClient http;
  private final Duration timeout;

  private ProviderHttpClient(Builder builder) {
    java.net.http.HttpClient.Builder jdk = java.net.http.HttpClient.newBuilder();
    if (builder.connectTimeout != null) {
      jdk.connectTimeout(builder.connectTimeout);
    }
    this.http = jdk.build();
    this.timeout = builder.readTimeout;
  }

  /** A builder to hand to LangChain4j's model builders, which set both timeouts on it. */
  static Builder builder() {
    return new Builder();
  }

  /** A provider's refusal (a status other than 2xx) and the wait it asked for, if any. */
  static final class Refused extends HttpException {
    private final transient Duration retryAfter;

    Refused(int status, String body, Duration retryAfter) {
      super(status, body);
      this.retryAfter = retryAfter;
    }

    Optional<Duration> retryAfter() {
      return Optional.ofNullable(retryAfter);
    }
  }

  @Override
  public SuccessfulHttpResponse execute(HttpRequest request) {
    CompletableFuture<HttpResponse<byte[]>> answer =
        http.sendAsync(toJdk(request), HttpResponse.BodyHandlers.ofByteArray());
    HttpResponse<byte[]> response;
    try {
      response =
          timeout == null ? answer.get() : answer.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (java.util.concurrent.TimeoutException e) {
      answer.cancel(true); // closes the connection: the provider stops too
      throw new TimeoutException(
          new HttpTimeoutException("no complete answer within " + timeout.toSeconds() + " s"));
    } catch (InterruptedException e) {
      answer.cancel(true);
      Thread.currentThread().interrupt();
      throw new CancellationException("the LLM request was abandoned: its call stopped");
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof HttpTimeoutException connect) {
        throw new TimeoutException(connect);
      }
      if (cause instanceof IOException io) {
        throw new UncheckedIOException(io);
      }
      throw cause instanceof RuntimeException r ? r : new IllegalStateException(cause);
    }
    int status = response.statusCode();
    if (status < 200 || status >= 300) {
      throw new Refused(
          status,
          new String(response.body(), StandardCharsets.UTF_8),
          RetryAfter.of(response.headers().map(), Instant.now()).orElse(null));
    }
    return SuccessfulHttpResponse.builder()
        .statusCode(status)
        .headers(response.headers().map())
        .body(response.body())
        .build();
  }

  /** Pallas' models answer whole (ChatModel), never streamed. */
  @Override
  public void execute(
      HttpRequest request, ServerSentEventParser parser, ServerSentEventListener listener) {
    throw new UnsupportedOperationException("Pallas does not stream LLM answers");
  }

  private static java.net.http.HttpRequest toJdk(HttpRequest request) {
    if (!request.formDataFields().isEmpty() || !request.formDataFiles().isEmpty()) {
      throw new UnsupportedOperationException("multipart requests are not used by Pallas");
    }
    java.net.http.HttpRequest.Builder builder =
        java.net.http.HttpRequest.newBuilder().uri(URI.create(request.url()));
    request
        .headers()
        .forEach((name, values) -> {
          if (values != null) {
            values.forEach(value -> builder.header(name, value));
          }
        });
    // the LLM request's span as its parent (docs/observability.md, "Context propagation"); the
    // request is built on the thread that runs the turn, where that span is current
    W3CTraceContextPropagator.getInstance()
        .inject(Context.current(), builder, java.net.http.HttpRequest.Builder::setHeader);
    builder.method(
        request.method().name(),
        request.body() == null
            ? java.net.http.HttpRequest.BodyPublishers.noBody()
            : java.net.http.HttpRequest.BodyPublishers.ofString(request.body()));
    return builder.build();
  }

  /** Takes the timeouts a LangChain4j model builder sets. */
  static final class Builder implements HttpClientBuilder {
    private Duration connectTimeout;
    private Duration readTimeout;

    @Override
    public Duration connectTimeout() {
      return connectTimeout;
    }

    @Override
    public Builder connectTimeout(Duration timeout) {
      this.connectTimeout = timeout;
      return this;
    }

    /** Here: how long the whole answer may take, from sending the request to its last byte. */
    @Override
    public Duration readTimeout() {
      return readTimeout;
    }

    @Override
    public Builder readTimeout(Duration timeout) {
      this.readTimeout = timeout;
      return this;
    }

    @Override
    public ProviderHttpClient build() {
      return new ProviderHttpClient(this);
    }
  }
}
