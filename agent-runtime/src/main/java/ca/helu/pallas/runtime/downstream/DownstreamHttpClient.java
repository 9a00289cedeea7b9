package ca.helu.pallas.runtime.downstream;

import java.io.IOException;
import java.net.Authenticator;
import java.net.CookieHandler;
import java.net.ProxySelector;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.Flow;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSession;

/**
 * The HTTP client one downstream MCP session's SDK transport sends through: a shared JDK client,
 * plus what the SDK (2.1.0) lacks for one call's failure to stay that call's.
 *
 * <ul>
 *   <li>A 404 or 400 on our session ({@code Mcp-Session-Id} sent) becomes a {@link
 *       SessionGoneException} for that request alone. The SDK would read it as the session's end:
 *       fail every call in flight on the client, and start a new session on each such answer, so
 *       concurrent 404s (a restarted server) re-initialize over each other. Instead the request's
 *       POST retires the session (calls in flight finish on it) and one new session is opened.
 *   <li>Any other status outside 2xx on a POST becomes a {@link DownstreamException} naming it,
 *       rather than an SDK exception quoting the server's body.
 *   <li>A tools/call's exchange and answer stream report to the call's {@link CallWatch}: its end,
 *       and a way to stop it when the call gives up, which closes its connection.
 * </ul>
 *
 * <p>The transport reaches it through {@code HttpClientStreamableHttpTransport.Builder
 * #clientBuilder}, whose {@link Builder#build()} returns it (DownstreamFailuresIT fails when the
 * SDK stops sending through it: a 404 would again fail the other calls).
 */
final class DownstreamHttpClient extends HttpClient {
  private final HttpClient http;
  private final Runnable sessionGone;

  /**
   * @param http the shared client that sends
   * @param sessionGone told when a POST on the session is answered 404 or 400
   */
  DownstreamHttpClient(HttpClient http, Runnable sessionGone) {
    this.http = http;
    this.sessionGone = sessionGone;
  }

  /** The builder the SDK's transport calls: it sets the connect timeout and builds, no more. */
  static HttpClient.Builder builderFor(DownstreamHttpClient client) {
    return new Builder(client);
  }

  @Override
  public <T> CompletableFuture<HttpResponse<T>> sendAsync(
      HttpRequest request, HttpResponse.BodyHandler<T> handler) {
    CallWatch watch =
        request.bodyPublisher().orElse(null) instanceof WatchedRequestBody body
            ? body.watch()
            : null;
    CompletableFuture<HttpResponse<T>> sent = http.sendAsync(request, handler);
    // the SDK cancels the future it holds; the cancellation must reach the exchange
    CompletableFuture<HttpResponse<T>> result =
        new CompletableFuture<>() {
          @Override
          public boolean cancel(boolean mayInterruptIfRunning) {
            sent.cancel(mayInterruptIfRunning);
            return super.cancel(mayInterruptIfRunning);
          }
        };
    if (watch != null) {
      watch.exchange(() -> result.cancel(true));
    }
    sent.whenComplete((response, error) -> {
      if (error != null) {
        result.completeExceptionally(error);
        return;
      }
      try {
        result.complete(inspect(request, response, watch));
      } catch (DownstreamException e) {
        result.completeExceptionally(e);
      }
    });
    return result;
  }

  private <T> HttpResponse<T> inspect(HttpRequest request, HttpResponse<T> response, CallWatch w) {
    int status = response.statusCode();
    String method = request.method();
    boolean onSession = request.headers().firstValue("Mcp-Session-Id").isPresent();
    if (onSession && (status == 404 || status == 400) && !"DELETE".equals(method)) {
      discard(response);
      if ("POST".equals(method)) {
        sessionGone.run();
      }
      throw new SessionGoneException(status);
    }
    if ("POST".equals(method) && (status < 200 || status > 299)) {
      discard(response);
      throw new DownstreamException("answered HTTP " + status + refusal(response));
    }
    if (w != null && answersInBody(response) && response.body() instanceof Flow.Publisher<?> body) {
      @SuppressWarnings("unchecked")
      T watched = (T) new WatchedStream((Flow.Publisher<List<ByteBuffer>>) body, w);
      return new WithBody<>(response, watched);
    }
    return response;
  }

  private static final Pattern CHALLENGE_ERROR = Pattern.compile("\\berror=\"([^\"]*)\"");
  private static final Pattern CHALLENGE_DESCRIPTION =
      Pattern.compile("\\berror_description=\"([^\"]*)\"");

  /**
   * Why a server refused the credentials sent, as its {@code WWW-Authenticate} says (RFC 6750 §3:
   * {@code error}, {@code error_description}), e.g. " (invalid_token: the token is not meant for
   * this agent (aud))"; empty when it says nothing. The server's own words, cut as any server text
   * (Failures.bounded); a server names a problem of the token, never the token.
   */
  static String refusal(HttpResponse<?> response) {
    String challenge = response.headers().firstValue("WWW-Authenticate").orElse("");
    Matcher error = CHALLENGE_ERROR.matcher(challenge);
    if (!error.find()) {
      return "";
    }
    Matcher description = CHALLENGE_DESCRIPTION.matcher(challenge);
    String why = description.find() ? error.group(1) + ": " + description.group(1) : error.group(1);
    return " (" + Failures.bounded(why) + ")";
  }

  /** Whether the SDK reads this response as the call's answer (a JSON body or an SSE stream). */
  private static boolean answersInBody(HttpResponse<?> response) {
    String type = response.headers().firstValue("Content-Type").orElse("").toLowerCase();
    return response.statusCode() != 202
        && !"0".equals(response.headers().firstValue("Content-Length").orElse(null))
        && (type.contains("text/event-stream") || type.contains("application/json"));
  }

  /** Closes an unread body, so its connection is not left waiting for a reader. */
  private static void discard(HttpResponse<?> response) {
    if (response.body() instanceof Flow.Publisher<?> body) {
      body.subscribe(
          new Flow.Subscriber<Object>() {
            @Override
            public void onSubscribe(Flow.Subscription subscription) {
              subscription.cancel();
            }

            @Override
            public void onNext(Object item) {}

            @Override
            public void onError(Throwable throwable) {}

            @Override
            public void onComplete() {}
          });
    }
  }

  /** A request body that carries the watch of the call it belongs to, to this client. */
  record WatchedRequestBody(HttpRequest.BodyPublisher body, CallWatch watch)
      implements HttpRequest.BodyPublisher {
    static WatchedRequestBody of(String json, CallWatch watch) {
      return new WatchedRequestBody(
          HttpRequest.BodyPublishers.ofString(json, StandardCharsets.UTF_8), watch);
    }

    @Override
    public long contentLength() {
      return body.contentLength();
    }

    @Override
    public void subscribe(Flow.Subscriber<? super ByteBuffer> subscriber) {
      body.subscribe(subscriber);
    }
  }

  /**
   * A call's answer stream between the JDK and the SDK: tells the watch how it ended, and ends it
   * for both sides when the call gives up (the SDK then drops it from its session at once).
   */
  private static final class WatchedStream
      implements Flow.Publisher<List<ByteBuffer>>,
          Flow.Subscriber<List<ByteBuffer>>,
          Flow.Subscription,
          CallWatch.Stoppable {
    private final Flow.Publisher<List<ByteBuffer>> body;
    private final CallWatch watch;
    private Flow.Subscriber<? super List<ByteBuffer>> reader;
    private volatile Flow.Subscription upstream;
    private boolean done;

    WatchedStream(Flow.Publisher<List<ByteBuffer>> body, CallWatch watch) {
      this.body = body;
      this.watch = watch;
    }

    @Override
    public void subscribe(Flow.Subscriber<? super List<ByteBuffer>> subscriber) {
      reader = subscriber;
      body.subscribe(this);
    }

    @Override
    public void onSubscribe(Flow.Subscription subscription) {
      upstream = subscription;
      reader.onSubscribe(this);
      watch.exchange(this);
    }

    @Override
    public synchronized void onNext(List<ByteBuffer> item) {
      if (!done) {
        reader.onNext(item);
      }
    }

    @Override
    public void onError(Throwable error) {
      // the SDK sees ours, so the call is told the same whichever of us fails it first
      DownstreamException dropped =
          new DownstreamException(
              "the connection dropped before the answer ("
                  + Failures.bounded(
                      error instanceof IOException && error.getMessage() != null
                          ? error.getMessage()
                          : "no detail")
                  + ")",
              error);
      if (finish()) {
        reader.onError(dropped);
      }
      watch.ended(dropped);
    }

    @Override
    public void onComplete() {
      if (finish()) {
        reader.onComplete();
      }
      watch.ended(new DownstreamException("the server ended its answer without answering"));
    }

    @Override
    public void request(long n) {
      upstream.request(n);
    }

    /** The SDK stopped reading: the answer was unreadable, or its session was closed. */
    @Override
    public void cancel() {
      finish();
      upstream.cancel();
      watch.ended(new DownstreamException("answered something that is not a valid MCP message"));
    }

    @Override
    public void stop() {
      upstream.cancel();
      if (finish()) {
        reader.onError(new DownstreamException("the call was given up"));
      }
    }

    private synchronized boolean finish() {
      boolean first = !done;
      done = true;
      return first;
    }
  }

  /** A response with its body replaced. */
  private record WithBody<T>(HttpResponse<T> response, T body) implements HttpResponse<T> {
    @Override
    public int statusCode() {
      return response.statusCode();
    }

    @Override
    public HttpRequest request() {
      return response.request();
    }

    @Override
    public Optional<HttpResponse<T>> previousResponse() {
      return response.previousResponse();
    }

    @Override
    public HttpHeaders headers() {
      return response.headers();
    }

    @Override
    public Optional<SSLSession> sslSession() {
      return response.sslSession();
    }

    @Override
    public java.net.URI uri() {
      return response.uri();
    }

    @Override
    public HttpClient.Version version() {
      return response.version();
    }
  }

  @Override
  public <T> HttpResponse<T> send(HttpRequest request, HttpResponse.BodyHandler<T> handler)
      throws IOException, InterruptedException {
    return http.send(request, handler);
  }

  @Override
  public <T> CompletableFuture<HttpResponse<T>> sendAsync(
      HttpRequest request,
      HttpResponse.BodyHandler<T> handler,
      HttpResponse.PushPromiseHandler<T> pushPromiseHandler) {
    return sendAsync(request, handler);
  }

  @Override
  public Optional<CookieHandler> cookieHandler() {
    return http.cookieHandler();
  }

  @Override
  public Optional<Duration> connectTimeout() {
    return http.connectTimeout();
  }

  @Override
  public Redirect followRedirects() {
    return http.followRedirects();
  }

  @Override
  public Optional<ProxySelector> proxy() {
    return http.proxy();
  }

  @Override
  public SSLContext sslContext() {
    return http.sslContext();
  }

  @Override
  public SSLParameters sslParameters() {
    return http.sslParameters();
  }

  @Override
  public Optional<Authenticator> authenticator() {
    return http.authenticator();
  }

  @Override
  public Version version() {
    return http.version();
  }

  @Override
  public Optional<Executor> executor() {
    return http.executor();
  }

  /**
   * Hands the SDK's transport our client. Its settings are the shared client's, so anything but the
   * connect timeout the SDK sets (already the shared client's) is refused loudly: an SDK update
   * that sets more must be looked at, not silently ignored.
   */
  private record Builder(DownstreamHttpClient client) implements HttpClient.Builder {
    @Override
    public HttpClient.Builder connectTimeout(Duration duration) {
      return this;
    }

    @Override
    public HttpClient build() {
      return client;
    }

    private static UnsupportedOperationException unsupported(String what) {
      return new UnsupportedOperationException(
          "the MCP SDK set " + what + " on its HTTP client; DownstreamHttpClient does not take it");
    }

    @Override
    public HttpClient.Builder cookieHandler(CookieHandler cookieHandler) {
      throw unsupported("a cookie handler");
    }

    @Override
    public HttpClient.Builder sslContext(SSLContext sslContext) {
      throw unsupported("an SSL context");
    }

    @Override
    public HttpClient.Builder sslParameters(SSLParameters sslParameters) {
      throw unsupported("SSL parameters");
    }

    @Override
    public HttpClient.Builder executor(Executor executor) {
      throw unsupported("an executor");
    }

    @Override
    public HttpClient.Builder followRedirects(Redirect policy) {
      throw unsupported("a redirect policy");
    }

    @Override
    public HttpClient.Builder version(Version version) {
      throw unsupported("an HTTP version");
    }

    @Override
    public HttpClient.Builder priority(int priority) {
      throw unsupported("a priority");
    }

    @Override
    public HttpClient.Builder proxy(ProxySelector proxySelector) {
      throw unsupported("a proxy");
    }

    @Override
    public HttpClient.Builder authenticator(Authenticator authenticator) {
      throw unsupported("an authenticator");
    }
  }
}
