package ca.helu.pallas.runtime.llm;

import dev.langchain4j.exception.HttpException;
import dev.langchain4j.exception.TimeoutException;
import dev.langchain4j.http.client.HttpClient;
import dev.langchain4j.http.client.HttpClientBuilder;
import dev.langchain4j.http.client.HttpRequest;
import dev.langchain4j.http.client.SuccessfulHttpResponse;
import dev.langchain4j.http.client.sse.ServerSentEvent;
import dev.langchain4j.http.client.sse.ServerSentEventContext;
import dev.langchain4j.http.client.sse.ServerSentEventListener;
import dev.langchain4j.http.client.sse.ServerSentEventParser;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import java.io.IOException;
import java.io.InputStream;
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
import java.util.concurrent.atomic.AtomicReference;

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
 *   <li>a refusal carries the provider's {@code Retry-After} ({@link Refused});
 *   <li>a streamed answer is bounded and aborted the same way, and its request returns only once
 *       the stream has ended (LangChain4j's returns at once and streams on another thread), so the
 *       model's caller knows then whether the answer came whole.
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

  /**
   * A streamed answer (server-sent events; docs/runtime.md, "Streamed answers"): its events are
   * read on a virtual thread and handed to {@code listener} there, while the calling thread waits
   * for the stream's end, at most the timeout from sending the request; a timeout or an interrupt
   * of the calling thread (its call stopped) stops the reader, which closes the connection. The
   * listener then hears, on the calling thread, either {@code onError} with the first failure or
   * {@code onClose}: never both, unlike LangChain4j's own client.
   */
  @Override
  public void execute(
      HttpRequest request, ServerSentEventParser parser, ServerSentEventListener listener) {
    long start = System.nanoTime();
    CompletableFuture<HttpResponse<InputStream>> answer =
        http.sendAsync(toJdk(request), HttpResponse.BodyHandlers.ofInputStream());
    HttpResponse<InputStream> response;
    try {
      response =
          timeout == null ? answer.get() : answer.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (java.util.concurrent.TimeoutException e) {
      answer.cancel(true);
      listener.onError(timedOut());
      return;
    } catch (InterruptedException e) {
      answer.cancel(true);
      Thread.currentThread().interrupt();
      listener.onError(abandoned());
      return;
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      listener.onError(
          cause instanceof HttpTimeoutException connect ? new TimeoutException(connect) : cause);
      return;
    }
    EventStream stream = new EventStream(response, parser, listener);
    Thread reader = Thread.ofVirtual().name("pallas-llm-stream").start(stream::read);
    boolean interrupted = false;
    try {
      long left =
          timeout == null ? Long.MAX_VALUE : timeout.toNanos() - (System.nanoTime() - start);
      if (left <= 0 || !reader.join(Duration.ofNanos(Math.max(1, left)))) {
        stream.stop(timedOut(), reader);
      }
    } catch (InterruptedException e) {
      interrupted = true;
      stream.stop(abandoned(), reader);
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
    stream.end();
  }

  private TimeoutException timedOut() {
    return new TimeoutException(
        new HttpTimeoutException("no complete answer within " + timeout.toSeconds() + " s"));
  }

  private static CancellationException abandoned() {
    return new CancellationException("the LLM request was abandoned: its call stopped");
  }

  /** One streamed answer, read on its own thread; the first failure is the one reported. */
  private static final class EventStream {
    private static final Duration STOP_WAIT = Duration.ofSeconds(5);

    private final HttpResponse<InputStream> response;
    private final ServerSentEventParser parser;
    private final ServerSentEventListener listener;
    private final AtomicReference<Throwable> failure = new AtomicReference<>();

    EventStream(
        HttpResponse<InputStream> response,
        ServerSentEventParser parser,
        ServerSentEventListener listener) {
      this.response = response;
      this.parser = parser;
      this.listener = listener;
    }

    void read() {
      try (InputStream body = response.body()) {
        int status = response.statusCode();
        if (status < 200 || status >= 300) {
          failure.compareAndSet(
              null,
              new Refused(
                  status,
                  new String(body.readAllBytes(), StandardCharsets.UTF_8),
                  RetryAfter.of(response.headers().map(), Instant.now()).orElse(null)));
          return;
        }
        listener.onOpen(
            SuccessfulHttpResponse.builder()
                .statusCode(status)
                .headers(response.headers().map())
                .build());
        parser.parse(
            body,
            new ServerSentEventListener() {
              @Override
              public void onEvent(ServerSentEvent event, ServerSentEventContext context) {
                listener.onEvent(event, context);
              }

              @Override
              public void onEvent(ServerSentEvent event) {
                listener.onEvent(event);
              }

              @Override
              public void onError(Throwable error) {
                failure.compareAndSet(null, error);
              }
            });
      } catch (IOException | RuntimeException e) {
        failure.compareAndSet(null, e);
      }
    }

    /**
     * Stops the reader for {@code why}, which is reported rather than the read failing after it;
     * waits a bounded time for the reader to leave (its blocked read fails at the interrupt and
     * closing the body closes the connection).
     */
    void stop(Throwable why, Thread reader) {
      failure.compareAndSet(null, why);
      reader.interrupt();
      boolean interrupted = false;
      long until = System.nanoTime() + STOP_WAIT.toNanos();
      while (reader.isAlive() && System.nanoTime() < until) {
        try {
          reader.join(Duration.ofNanos(Math.max(1, until - System.nanoTime())));
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }

    /** Tells the listener how the stream ended: its first failure, or its close. */
    void end() {
      Throwable failed = failure.get();
      if (failed != null) {
        listener.onError(failed);
      } else {
        listener.onClose();
      }
    }
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
