package ca.helu.pallas.runtime.http;

import ca.helu.pallas.runtime.auth.InboundAuth;
import io.undertow.Undertow;
import io.undertow.UndertowOptions;
import io.undertow.server.DefaultByteBufferPool;
import io.undertow.server.HttpHandler;
import io.undertow.server.HttpServerExchange;
import io.undertow.server.handlers.PathHandler;
import io.undertow.servlet.Servlets;
import io.undertow.servlet.api.DeploymentInfo;
import io.undertow.servlet.api.DeploymentManager;
import io.undertow.servlet.util.ImmediateInstanceFactory;
import io.undertow.util.Headers;
import io.undertow.util.StatusCodes;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Servlet;
import jakarta.servlet.ServletException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;

/**
 * One Undertow listener: exact paths answered by plain handlers (metrics, probes, registry) and,
 * optionally, a servlet (the MCP transport) under /mcp. Heap buffers, per PERF-NOTES: direct
 * buffers kept RSS far above -Xmx.
 */
public final class HttpHost implements AutoCloseable {
  private static final Executor SERVLET_THREADS =
      Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("pallas-http-", 0).factory());

  private final Undertow undertow;
  private final DeploymentManager deployment;
  private final AtomicInteger posts;
  private final ConnectionCap connections;
  private final KeptConnections kept;
  private boolean closed;

  private HttpHost(
      Undertow undertow,
      DeploymentManager deployment,
      AtomicInteger posts,
      ConnectionCap connections,
      KeptConnections kept) {
    this.undertow = undertow;
    this.deployment = deployment;
    this.posts = posts;
    this.connections = connections;
    this.kept = kept;
  }

  /**
   * Waits until no POST is being answered (responses fully sent), up to {@code timeout}. A tool
   * call's turn ends before the SDK has written its response, so shutdown waits for this too.
   */
  public boolean awaitPostsDone(Duration timeout) throws InterruptedException {
    return poll(() -> posts.get() == 0, timeout, 10, () -> {});
  }

  /**
   * Checks {@code done} every {@code everyMillis} until it holds (true) or {@code timeout} passes
   * (false), running {@code meanwhile} before each wait. Shutdown polls Undertow's counters: they
   * signal nothing when they change.
   */
  private static boolean poll(
      BooleanSupplier done, Duration timeout, long everyMillis, Runnable meanwhile)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!done.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        return false;
      }
      meanwhile.run();
      Thread.sleep(everyMillis);
    }
    return true;
  }

  /** Builds a host; nothing listens until {@link #start()}. */
  public static Builder builder(String bindAddress, int port) {
    return new Builder(bindAddress, port);
  }

  public HttpHost start() {
    undertow.start();
    connections.listening(undertow);
    return this;
  }

  /** The connections open on this listener; 0 when its connections are not capped. */
  public long openConnections() {
    return connections.open();
  }

  /**
   * A connection left idle this long by a draining replica's client is closed: a client that goes
   * on with its conversation sends sooner, on a connection its answer closes. Closing an idle
   * connection races a request the client may be sending on it just then, which a client without
   * retries (the Python SDK's httpx) loses: 1 s, as before, was within the pauses of a client on a
   * loaded machine (DurableFleetIT saw "Server disconnected without sending a response" once in a
   * rollout); a client in a conversation seldom pauses 5 s, and a draining replica whose clients
   * are all idle stops 4 s later, within its drain timeout (docs/runtime.md, "Errors callers see").
   */
  static final Duration IDLE_WHILE_DRAINING = Duration.ofSeconds(5);

  /**
   * Waits until the listener holds no connection open, up to {@code timeout}, closing those left
   * idle for {@link #IDLE_WHILE_DRAINING} (KeptConnections); true if none is left.
   */
  public boolean awaitConnectionsClosed(Duration timeout) throws InterruptedException {
    return poll(
        () -> connections.open() == 0, timeout, 50, () -> kept.closeIdle(IDLE_WHILE_DRAINING));
  }

  /** The port actually bound (useful with port 0). */
  public int port() {
    return ((InetSocketAddress) undertow.getListenerInfo().get(0).getAddress()).getPort();
  }

  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    undertow.stop();
    if (deployment != null) {
      try {
        deployment.stop();
      } catch (ServletException e) {
        // stopping anyway
      }
      deployment.undeploy();
    }
  }

  /** Sends a fixed body. */
  public static void send(
      HttpServerExchange exchange, int status, String contentType, byte[] body) {
    exchange.setStatusCode(status);
    exchange.getResponseHeaders().put(Headers.CONTENT_TYPE, contentType);
    exchange.getResponseSender().send(ByteBuffer.wrap(body));
  }

  /** 405 with the methods allowed, echoing nothing of the request. */
  static void methodNotAllowed(HttpServerExchange exchange, String allow) {
    exchange.getResponseHeaders().put(Headers.ALLOW, allow);
    send(
        exchange,
        StatusCodes.METHOD_NOT_ALLOWED,
        "text/plain",
        "method not allowed\n".getBytes(StandardCharsets.UTF_8));
  }

  /** Answers GET and HEAD only. */
  public static HttpHandler getOnly(HttpHandler handler) {
    return exchange -> {
      String method = exchange.getRequestMethod().toString();
      if (!method.equals("GET") && !method.equals("HEAD")) {
        methodNotAllowed(exchange, "GET, HEAD");
        return;
      }
      handler.handleRequest(exchange);
    };
  }

  /**
   * GET: the metrics {@code scrape} writes in the content type {@code contentTypeFor} picks for the
   * request's {@code Accept} header.
   */
  public static HttpHandler metrics(
      UnaryOperator<String> contentTypeFor, UnaryOperator<String> scrape) {
    return getOnly(exchange -> {
      String contentType = contentTypeFor.apply(exchange.getRequestHeaders().getFirst("Accept"));
      if (exchange.isInIoThread()) {
        exchange.dispatch(() ->
            send(
                exchange,
                200,
                contentType,
                scrape.apply(contentType).getBytes(StandardCharsets.UTF_8)));
        return;
      }
      send(exchange, 200, contentType, scrape.apply(contentType).getBytes(StandardCharsets.UTF_8));
    });
  }

  /** 200 "ok" while {@code healthy}, 503 otherwise. */
  public static HttpHandler probe(BooleanSupplier healthy) {
    byte[] ok = "ok\n".getBytes(StandardCharsets.UTF_8);
    byte[] no = "not ready\n".getBytes(StandardCharsets.UTF_8);
    return getOnly(exchange -> {
      boolean up = healthy.getAsBoolean();
      send(exchange, up ? 200 : 503, "text/plain; charset=utf-8", up ? ok : no);
    });
  }

  /** Bytes of each buffer Undertow reads and writes with. */
  private static final int BUFFER_SIZE = 16 * 1024;

  /** Default of {@link Builder#bodyTimeout}. */
  public static final Duration DEFAULT_BODY_TIMEOUT = Duration.ofSeconds(30);

  /** An idle keep-alive connection is closed after this long without a request. */
  static final int KEEP_ALIVE_IDLE_MILLIS = 120_000;

  private static final Set<String> ROUTED_METHODS = Set.of("GET", "HEAD", "POST", "DELETE");

  public static final class Builder {
    private final String bindAddress;
    private final int port;
    private final PathHandler paths = new PathHandler(16);
    private final Set<String> healthPaths = new HashSet<>();
    private final AtomicInteger posts = new AtomicInteger();
    private Servlet servlet;
    private String servletPath;
    private Duration bodyTimeout = DEFAULT_BODY_TIMEOUT;
    private Drain drain = Drain.NEVER;
    private RequestPool pool;
    private EdgeSessions sessions = EdgeSessions.UNBOUNDED;
    private ConnectionCap connections = ConnectionCap.NONE;
    private CallCancels calls = CallCancels.NONE;
    private EdgeAuth auth;
    private Predicate<String> resources = uri -> true;

    private Builder(String bindAddress, int port) {
      this.bindAddress = bindAddress;
      this.port = port;
    }

    public Builder exact(String path, HttpHandler handler) {
      paths.addExactPath(path, handler);
      return this;
    }

    /** Every path under {@code prefix}, for a handler that routes on the rest itself. */
    public Builder prefix(String prefix, HttpHandler handler) {
      paths.addPrefixPath(prefix, handler);
      return this;
    }

    /**
     * An exact path answered also from the connections kept for health (docs/runtime.md,
     * "Connections").
     */
    public Builder health(String path, HttpHandler handler) {
      healthPaths.add(path);
      return exact(path, handler);
    }

    /** How long a request's headers, and a POST body to the servlet, may take to arrive. */
    public Builder bodyTimeout(Duration timeout) {
      this.bodyTimeout = timeout;
      return this;
    }

    /** What the servlet's edge does while the server drains (Drain). */
    public Builder drain(Drain drain) {
      this.drain = drain;
      return this;
    }

    /**
     * What the servlet's edge holds at once (the process's {@code pool}), and the sessions counted
     * against its cap; the listener holds at most {@code limits.maxConnections()} connections, the
     * last {@code limits.connectionReserve()} of them for health requests.
     */
    public Builder limits(RequestPool pool, EdgeSessions sessions) {
      EdgeLimits limits = pool.limits();
      this.pool = pool;
      this.sessions = sessions;
      this.connections = new ConnectionCap(limits.maxConnections(), limits.connectionReserve());
      return this;
    }

    /** The servlet's calls in flight, which notifications/cancelled stops at the edge. */
    public Builder calls(CallCancels calls) {
      this.calls = calls;
      return this;
    }

    /**
     * Who may call the servlet (docs/runtime.md, "Inbound authentication"), and the Protected
     * Resource Metadata (RFC 9728) at its well-known path, plain and suffixed with the servlet's
     * path, which is where clients look for it first. Each session is its caller's ({@link
     * EdgeSessions#admits}).
     */
    public Builder auth(InboundAuth inbound, String mcpPath) {
      this.auth = new EdgeAuth(inbound);
      byte[] document = inbound.metadata();
      HttpHandler metadata = getOnly(exchange -> send(exchange, 200, "application/json", document));
      exact(InboundAuth.METADATA_PATH, metadata);
      return exact(InboundAuth.METADATA_PATH + mcpPath, metadata);
    }

    /** At most {@code max} connections, all of them for any request (a probe listener). */
    public Builder maxConnections(int max) {
      this.connections = new ConnectionCap(max, 0);
      return this;
    }

    /**
     * The resources the servlet's MCP server has: a resources/subscribe naming any other URI is
     * refused at the edge (docs/runtime.md, "Errors callers see"), where the SDK would keep it as a
     * subscription until the session ends.
     */
    public Builder resources(Predicate<String> has) {
      this.resources = has;
      return this;
    }

    public Builder servlet(String path, Servlet servlet) {
      this.servletPath = path;
      this.servlet = servlet;
      return this;
    }

    public HttpHost build() {
      DeploymentManager manager = null;
      HttpHandler notFound =
          exchange ->
              send(
                  exchange,
                  404,
                  "text/plain; charset=utf-8",
                  "not found\n".getBytes(StandardCharsets.UTF_8));
      HttpHandler fallback = notFound;
      if (servlet != null) {
        DeploymentInfo info =
            Servlets.deployment()
                .setClassLoader(HttpHost.class.getClassLoader())
                .setContextPath("/")
                .setDeploymentName("mcp-" + port)
                // the SDK's servlet blocks its thread until a call's response stream ends, so
                // servlet requests run on virtual threads: an in-flight call (a slow LLM turn)
                // then costs a virtual thread instead of one of Undertow's few workers
                .setExecutor(SERVLET_THREADS)
                .setAsyncExecutor(SERVLET_THREADS)
                .addServlet(
                    Servlets.servlet(
                            "mcp", servlet.getClass(), new ImmediateInstanceFactory<>(servlet))
                        .addMapping(servletPath)
                        .setAsyncSupported(true))
                // refusals as JSON-RPC errors, never the transport's serialized exceptions
                .addFilter(
                    Servlets.filter(
                            "mcp-edge",
                            McpEdgeFilter.class,
                            new ImmediateInstanceFactory<>(
                                new McpEdgeFilter(
                                    bodyTimeout,
                                    drain,
                                    pool == null ? new RequestPool(EdgeLimits.DEFAULT) : pool,
                                    sessions,
                                    connections,
                                    calls,
                                    auth,
                                    resources)))
                        .setAsyncSupported(true))
                .addFilterServletNameMapping("mcp-edge", "mcp", DispatcherType.REQUEST);
        // a container of its own: deployments in the shared default container are keyed by
        // name, and hosts on port 0 would share one (closing one host would undeploy another)
        manager = Servlets.newContainer().addDeployment(info);
        manager.deploy();
        try {
          // as the prefix fallback: an exact-path match would strip the path the servlet
          // container routes on; unknown paths get the container's 404
          fallback = manager.start();
        } catch (ServletException e) {
          throw new IllegalStateException("cannot start the MCP servlet: " + e.getMessage(), e);
        }
      }
      HttpHandler routed = fallback;
      // counts POSTs until their exchange completes, i.e. until the response is fully sent
      paths.addPrefixPath(
          "/",
          exchange -> {
            // TRACE would echo the request's headers (credentials included) from the servlet
            // container's default servlet; the MCP path refuses with a JSON-RPC error itself
            String method = exchange.getRequestMethod().toString();
            if (!ROUTED_METHODS.contains(method)
                && (servletPath == null || !exchange.getRequestPath().equals(servletPath))) {
              methodNotAllowed(exchange, "GET, HEAD, POST, DELETE");
              return;
            }
            if (exchange.getRequestMethod().equalToString("POST")) {
              posts.incrementAndGet();
              exchange.addExchangeCompleteListener((done, next) -> {
                posts.decrementAndGet();
                next.proceed();
              });
            }
            routed.handleRequest(exchange);
          });
      int cores = Runtime.getRuntime().availableProcessors();
      KeptConnections kept = new KeptConnections();
      Undertow.Builder undertow =
          Undertow.builder()
              .addHttpListener(port, bindAddress)
              .setIoThreads(Math.max(2, cores))
              .setWorkerThreads(Math.max(8, cores * 8))
              // heap buffers (PERF-NOTES: direct ones kept RSS far above -Xmx), pooled without
              // thread-local caches: a call's writes run on its own virtual thread, whose cache
              // (up to 4 buffers) would be reclaimed only by a finalizer once the thread ended
              // (docs/runtime.md, "Memory")
              .setByteBufferPool(new DefaultByteBufferPool(false, BUFFER_SIZE, 256, 0))
              // no entity limit here (Undertow's default is 10 MiB): McpEdgeFilter reads at most
              // the body limit + 1 and refuses past it with a JSON-RPC error naming it; the other
              // paths read no body
              .setServerOption(UndertowOptions.MAX_ENTITY_SIZE, Long.MAX_VALUE)
              .setServerOption(UndertowOptions.ENABLE_HTTP2, false)
              // a client that sends its headers too slowly, or idles between requests on a
              // keep-alive connection, loses the connection (docs/runtime.md, limits)
              .setServerOption(UndertowOptions.REQUEST_PARSE_TIMEOUT, (int) bodyTimeout.toMillis())
              .setServerOption(UndertowOptions.NO_REQUEST_TIMEOUT, KEEP_ALIVE_IDLE_MILLIS)
              .setHandler(kept.track(connections.guard(paths, healthPaths, servletPath)));
      return new HttpHost(connections.applyTo(undertow).build(), manager, posts, connections, kept);
    }
  }
}
