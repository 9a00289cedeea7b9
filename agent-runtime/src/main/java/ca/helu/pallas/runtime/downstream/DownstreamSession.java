package ca.helu.pallas.runtime.downstream;

import ca.helu.pallas.runtime.loop.Cancellation;
import io.modelcontextprotocol.client.McpAsyncClient;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.spec.McpSchema;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import reactor.util.context.Context;

/**
 * One MCP session with a downstream server: an SDK client, the calls using it, and whether it is
 * retired. A retired session takes no new calls; the calls in flight on it finish, and the last one
 * closes it (docs/runtime.md, "Downstream failures"). Closing an SDK client fails every call still
 * pending on it, so a session is never closed under a call.
 */
final class DownstreamSession {
  private static final Logger LOG = LoggerFactory.getLogger(DownstreamSession.class);

  /**
   * Calls a session may give up on before it is retired. The SDK keeps a given-up request's pending
   * entry until its session closes (its request timeout does not remove it), so a server that keeps
   * hanging calls would otherwise grow a session's memory without end.
   */
  static final int MAX_ABANDONED = 256;

  private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(5);
  private static final Duration SDK_TIMEOUT_MARGIN = Duration.ofSeconds(5);

  /**
   * What a session needs to know about its server and what it tells its owner.
   *
   * @param listens whether the session hears the server's notifications (its tools changed, a
   *     call's progress); a probe's does not ({@link #probe})
   */
  record Endpoint(
      String name,
      String url,
      Map<String, String> headers,
      Credentials credentials,
      Duration timeout,
      Supplier<HttpClient> http,
      Consumer<McpSchema.ProgressNotification> progress,
      Runnable toolsChanged,
      boolean listens) {

    /**
     * A health probe's session (docs/runtime.md, "Health"): initialized, then closed at once. It
     * hears none of the server's notifications: the SDK's client (2.1) answers a tools, resources
     * or prompts list_changed by listing them, whatever its builder was given (McpAsyncClient
     * registers those handlers itself), and that listing, on a session being closed, fails with an
     * ERROR line for a healthy server (server-everything announces its tools as a session starts;
     * McpProbeIT).
     */
    static Endpoint probe(
        String url, Map<String, String> headers, Duration timeout, Supplier<HttpClient> http) {
      return new Endpoint(
          "health probe of " + url,
          url,
          headers,
          Credentials.NONE,
          timeout,
          http,
          n -> {},
          () -> {},
          false);
    }
  }

  private final Endpoint endpoint;
  private final WatchingTransport transport;
  private final McpAsyncClient client;
  private final Consumer<DownstreamSession> gone;
  // the opening holds the session as a call would: a session gone while it initializes (its
  // initialized notification refused) must not be closed under its own initialize, which the SDK
  // then fails with a message of its internals
  private int calls = 1;
  private int abandoned;
  private boolean retired;
  private boolean closed;
  private volatile boolean answered;

  /**
   * @param gone told when the server no longer knows this session (it should be retired)
   */
  private DownstreamSession(Endpoint endpoint, Consumer<DownstreamSession> gone) {
    this.endpoint = endpoint;
    this.gone = gone;
    this.transport =
        transport(
            endpoint, new DownstreamHttpClient(endpoint.http().get(), () -> gone.accept(this)));
    this.client = client(endpoint, transport);
  }

  /**
   * Opens a session: connects and initializes, within the endpoint's timeout; throws on failure.
   */
  static DownstreamSession open(Endpoint endpoint, Consumer<DownstreamSession> gone) {
    DownstreamSession session = new DownstreamSession(endpoint, gone);
    try {
      session.client.initialize().block(endpoint.timeout());
    } catch (RuntimeException e) {
      session.close();
      throw e;
    }
    session.exit();
    if (session.isClosed()) {
      throw new DownstreamException("the server does not keep our MCP sessions");
    }
    LOG.debug("connected to {} at {}", endpoint.name(), endpoint.url());
    return session;
  }

  /**
   * The SDK's transport to {@code url}, sending {@code headers} with every request, through {@code
   * http}.
   */
  static HttpClientStreamableHttpTransport.Builder transportTo(
      String url, Map<String, String> headers, DownstreamHttpClient http) {
    URI uri = URI.create(url);
    String base = uri.getScheme() + "://" + uri.getRawAuthority();
    String path = uri.getRawPath() == null || uri.getRawPath().isEmpty() ? "/" : uri.getRawPath();
    if (uri.getRawQuery() != null) {
      path += "?" + uri.getRawQuery();
    }
    HttpRequest.Builder request = HttpRequest.newBuilder();
    headers.forEach(request::header);
    return HttpClientStreamableHttpTransport.builder(base)
        .endpoint(path)
        .clientBuilder(DownstreamHttpClient.builderFor(http))
        .requestBuilder(request);
  }

  private static WatchingTransport transport(Endpoint endpoint, DownstreamHttpClient http) {
    HttpClientStreamableHttpTransport transport =
        transportTo(endpoint.url(), endpoint.headers(), http)
            .asyncHttpRequestCustomizer((builder, method, target, body, ctx) -> {
              // read at each request: an agent's identity is a token the kubelet rotates
              endpoint.credentials().session().forEach(builder::setHeader);
              // WatchingTransport leaves our entries only in the context of a tools/call, and the
              // SDK sends that as one POST; the long-lived GET may be opened in any context
              if ("POST".equals(method)) {
                CallWatch watch = WatchingTransport.watchOf(ctx);
                if (watch != null && body != null) {
                  builder.POST(DownstreamHttpClient.WatchedRequestBody.of(body, watch));
                }
                if (ctx.get(WatchingTransport.CALL_HEADERS) instanceof Map<?, ?> call) {
                  call.forEach((name, value) -> builder.setHeader((String) name, (String) value));
                }
                // the calling span, as traceparent/tracestate (docs/observability.md, "Context
                // propagation"); carried like the bearer, in the call's Reactor context
                if (ctx.get(WatchingTransport.TRACE) instanceof Map<?, ?> trace) {
                  trace.forEach((name, value) -> builder.setHeader((String) name, (String) value));
                }
              }
              return Mono.just(builder);
            })
            .build();
    return new WatchingTransport(transport, endpoint.listens());
  }

  private static McpAsyncClient client(Endpoint endpoint, WatchingTransport transport) {
    return McpClient.async(transport)
        .clientInfo(new McpSchema.Implementation("pallas", "1.0.0"))
        // after ours (callTool's), so that a timed-out call is always one we gave up on
        .requestTimeout(endpoint.timeout().plus(SDK_TIMEOUT_MARGIN))
        .initializationTimeout(endpoint.timeout())
        .toolsChangeConsumer(changed -> Mono.fromRunnable(endpoint.toolsChanged()))
        .progressConsumer(n -> Mono.fromRunnable(() -> endpoint.progress().accept(n)))
        .build();
  }

  /** Takes a new call, unless retired. */
  synchronized boolean enter() {
    if (retired) {
      return false;
    }
    calls++;
    return true;
  }

  /** A call taken by {@link #enter()} is over; the last call of a retired session closes it. */
  void exit() {
    boolean close;
    synchronized (this) {
      calls--;
      close = retired && calls == 0 && !closed;
      closed |= close;
    }
    if (close) {
      closeClient();
    }
  }

  /** Takes no more calls; closes once the calls in flight end. */
  void retire() {
    boolean close;
    synchronized (this) {
      if (retired) {
        return;
      }
      retired = true;
      close = calls == 0 && !closed;
      closed |= close;
    }
    if (close) {
      closeClient();
    }
  }

  synchronized boolean isClosed() {
    return closed;
  }

  /**
   * Whether any call on this session was answered (a session gone before that counts as a failed
   * connect).
   */
  boolean answered() {
    return answered;
  }

  /**
   * Calls a tool within the endpoint's timeout. Fails this call alone: a timeout, a dropped or
   * unreadable answer stream or a mixed-up answer stops its exchange and leaves the session to the
   * other calls.
   */
  McpSchema.CallToolResult callTool(
      McpSchema.CallToolRequest request, Map<String, String> callHeaders, Cancellation stop) {
    CallWatch watch = new CallWatch();
    // the call that made this one stops: the server is told (docs/runtime.md, "Deadlines and
    // cancellation"), and block() below, interrupted, gives the call up, closing its exchange
    Runnable unregister = stop.onStop(why -> cancel(watch.requestId(), why));
    Map<String, Object> entries = new HashMap<>();
    entries.put(WatchingTransport.WATCH, watch);
    if (!callHeaders.isEmpty()) {
      entries.put(WatchingTransport.CALL_HEADERS, callHeaders);
    }
    Map<String, String> trace = TraceHeaders.ofCurrentSpan();
    if (!trace.isEmpty()) {
      entries.put(WatchingTransport.TRACE, trace);
    }
    // when the SDK fails the call itself it has dropped the request; when we give up first (our
    // timeout, the watch) it keeps it pending until the session closes
    AtomicBoolean failedBySdk = new AtomicBoolean();
    Mono<McpSchema.CallToolResult> answer =
        client
            .callTool(request)
            .doOnError(e -> failedBySdk.set(true))
            .contextWrite(Context.of(McpTransportContext.KEY, McpTransportContext.create(entries)));
    try {
      McpSchema.CallToolResult result =
          Mono.firstWithSignal(answer, watch.failure().then(Mono.<McpSchema.CallToolResult>empty()))
              .timeout(endpoint.timeout())
              .block();
      answered = true;
      return result;
    } catch (RuntimeException e) {
      watch.abandon();
      if (!failedBySdk.get()) {
        abandoned();
      }
      throw e;
    } finally {
      unregister.run();
    }
  }

  /**
   * MCP's notifications/cancelled for a request sent on this session, best effort: the SDK's client
   * (2.1) sends none for a call it gives up, and tells a request its id only through the transport
   * ({@link CallWatch}). Nothing when the request was not sent yet.
   */
  private void cancel(Object requestId, Cancellation.Reason why) {
    if (requestId == null) {
      return;
    }
    var notification =
        new McpSchema.JSONRPCNotification(
            "notifications/cancelled",
            Map.of("requestId", requestId, "reason", "the caller's call stopped: " + why.words()));
    transport
        .sendMessage(notification)
        .subscribe(
            done -> {},
            e -> LOG.debug("cancelling a call on {} failed: {}", endpoint.name(), e.toString()),
            () -> LOG.debug("cancelled a call on {}: {}", endpoint.name(), why.words()));
  }

  McpSchema.ListToolsResult listTools() {
    McpSchema.ListToolsResult result = client.listTools().block(endpoint.timeout());
    answered = true;
    return result;
  }

  private void abandoned() {
    boolean retire;
    synchronized (this) {
      retire = ++abandoned == MAX_ABANDONED;
    }
    if (retire) {
      LOG.info(
          "{}: {} calls on one session were given up; opening a new session",
          endpoint.name(),
          MAX_ABANDONED);
      gone.accept(this);
    }
  }

  /** Closes the SDK client at once, whatever still runs on it (shutdown). */
  void close() {
    boolean close;
    synchronized (this) {
      retired = true;
      close = !closed;
      closed = true;
    }
    if (close) {
      closeClient();
    }
  }

  private void closeClient() {
    // ends the session at the server (DELETE) without waiting for it
    client
        .closeGracefully()
        .timeout(CLOSE_TIMEOUT)
        .subscribe(
            ignored -> {},
            e -> LOG.debug("closing a session of {}: {}", endpoint.name(), e.toString()));
  }
}
