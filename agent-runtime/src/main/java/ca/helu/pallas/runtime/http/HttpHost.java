package ca.helu.pallas.runtime.http;

import io.undertow.Undertow;
import io.undertow.UndertowOptions;
import io.undertow.server.HttpHandler;
import io.undertow.server.HttpServerExchange;
import io.undertow.server.handlers.PathHandler;
import io.undertow.servlet.Servlets;
import io.undertow.servlet.api.DeploymentInfo;
import io.undertow.servlet.api.DeploymentManager;
import io.undertow.servlet.util.ImmediateInstanceFactory;
import io.undertow.util.Headers;
import io.undertow.util.StatusCodes;
import jakarta.servlet.Servlet;
import jakarta.servlet.ServletException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * One Undertow listener: exact paths answered by plain handlers (metrics, probes, registry) and,
 * optionally, a servlet (the MCP transport) under /mcp. Heap buffers, per PERF-NOTES: direct
 * buffers kept RSS far above -Xmx.
 */
public final class HttpHost implements AutoCloseable {
  private static final java.util.concurrent.Executor SERVLET_THREADS =
      java.util.concurrent.Executors.newThreadPerTaskExecutor(
          Thread.ofVirtual().name("pallas-http-", 0).factory());

  private final Undertow undertow;
  private final DeploymentManager deployment;
  private final java.util.concurrent.atomic.AtomicInteger posts;
  private boolean closed;

  private HttpHost(
      Undertow undertow,
      DeploymentManager deployment,
      java.util.concurrent.atomic.AtomicInteger posts) {
    this.undertow = undertow;
    this.deployment = deployment;
    this.posts = posts;
  }

  /**
   * Waits until no POST is being answered (responses fully sent), up to {@code timeout}. A tool
   * call's turn ends before the SDK has written its response, so shutdown waits for this too.
   */
  public boolean awaitPostsDone(java.time.Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (posts.get() > 0) {
      if (System.nanoTime() > deadline) {
        return false;
      }
      Thread.sleep(10);
    }
    return true;
  }

  /** Builds a host; nothing listens until {@link #start()}. */
  public static Builder builder(String bindAddress, int port) {
    return new Builder(bindAddress, port);
  }

  public HttpHost start() {
    undertow.start();
    return this;
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
    exchange.getResponseSender().send(java.nio.ByteBuffer.wrap(body));
  }

  /** Answers GET and HEAD only. */
  public static HttpHandler getOnly(HttpHandler handler) {
    return exchange -> {
      String method = exchange.getRequestMethod().toString();
      if (!method.equals("GET") && !method.equals("HEAD")) {
        exchange.getResponseHeaders().put(Headers.ALLOW, "GET, HEAD");
        send(
            exchange,
            StatusCodes.METHOD_NOT_ALLOWED,
            "text/plain",
            "method not allowed\n".getBytes(StandardCharsets.UTF_8));
        return;
      }
      handler.handleRequest(exchange);
    };
  }

  /** Prometheus text of {@code scrape}. */
  public static HttpHandler metrics(Supplier<String> scrape, String contentType) {
    return getOnly(exchange -> {
      if (exchange.isInIoThread()) {
        exchange.dispatch(
            () -> send(exchange, 200, contentType, scrape.get().getBytes(StandardCharsets.UTF_8)));
        return;
      }
      send(exchange, 200, contentType, scrape.get().getBytes(StandardCharsets.UTF_8));
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

  /** Assembles the listener. */
  public static final class Builder {
    private final String bindAddress;
    private final int port;
    private final PathHandler paths = new PathHandler(16);
    private final java.util.concurrent.atomic.AtomicInteger posts =
        new java.util.concurrent.atomic.AtomicInteger();
    private Servlet servlet;
    private String servletPath;

    private Builder(String bindAddress, int port) {
      this.bindAddress = bindAddress;
      this.port = port;
    }

    public Builder exact(String path, HttpHandler handler) {
      paths.addExactPath(path, handler);
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
                        .setAsyncSupported(true));
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
      Undertow undertow =
          Undertow.builder()
              .addHttpListener(port, bindAddress)
              .setIoThreads(Math.max(2, cores))
              .setWorkerThreads(Math.max(8, cores * 8))
              .setDirectBuffers(false)
              .setBufferSize(16 * 1024)
              .setServerOption(UndertowOptions.MAX_ENTITY_SIZE, 80L * 1024 * 1024)
              .setServerOption(UndertowOptions.ENABLE_HTTP2, false)
              .setHandler(paths)
              .build();
      return new HttpHost(undertow, manager, posts);
    }
  }
}
