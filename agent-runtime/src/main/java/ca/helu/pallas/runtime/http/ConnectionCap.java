package ca.helu.pallas.runtime.http;

import io.undertow.Undertow;
import io.undertow.UndertowOptions;
import io.undertow.server.ConnectorStatistics;
import io.undertow.server.HttpHandler;
import io.undertow.util.Headers;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.xnio.Options;

/**
 * The connections one listener holds open (docs/runtime.md, "Connections"). XNIO accepts at most
 * {@code max}: past it the acceptor stops, and a new connection waits in the kernel's accept
 * backlog until one closes. While more than {@code max - reserve} are open, only health requests
 * are served and each response closes its connection, so the reserve turns over instead of being
 * kept alive; everything else is refused with 503.
 */
final class ConnectionCap {
  private static final Logger LOG = LoggerFactory.getLogger(ConnectionCap.class);

  /** No cap: the listeners of the registry and of tests. */
  static final ConnectionCap NONE = new ConnectionCap(Integer.MAX_VALUE, 0);

  private final int max;
  private final int reserve;

  /** Undertow's count of the listener's open connections, once it listens. */
  private volatile ConnectorStatistics statistics;

  /**
   * @param max connections accepted at once
   * @param reserve of those, the last ones kept for health requests (0: every request is one)
   */
  ConnectionCap(int max, int reserve) {
    this.max = max;
    this.reserve = reserve;
  }

  /** Caps the listener at the socket and has Undertow count its open connections. */
  Undertow.Builder applyTo(Undertow.Builder builder) {
    if (this == NONE) {
      return builder;
    }
    // equal marks: the acceptor stops at max and resumes as soon as one closes. (XNIO 3.8's
    // NioTcpServer hands the two marks to its handle in swapped order; equal ones are immune.)
    // Undertow counts connections only with its statistics on: a few atomic additions per
    // request and per read or write, next to a request's parsing and answer
    return builder
        .setSocketOption(Options.CONNECTION_HIGH_WATER, max)
        .setSocketOption(Options.CONNECTION_LOW_WATER, max)
        .setServerOption(UndertowOptions.ENABLE_STATISTICS, true);
  }

  /** Starts reading the count of the listener, which has just started. */
  void listening(Undertow undertow) {
    statistics = undertow.getListenerInfo().get(0).getConnectorStatistics();
  }

  /** The listener's open connections (0 before it listens, or uncapped). */
  long open() {
    ConnectorStatistics counted = statistics;
    return counted == null ? 0 : counted.getActiveConnections();
  }

  /** Whether the reserve is in use: only health requests are served, closing their connection. */
  boolean healthOnly() {
    return open() > max - reserve;
  }

  /** What a request refused for the reserve is told. */
  String refusal() {
    return "Service Unavailable: this agent has over "
        + (max - reserve)
        + " of its maximum of "
        + max
        + " connections open and keeps the rest for health checks; retry shortly";
  }

  /**
   * Ahead of {@code next}: while the reserve is in use, a request on a path of {@code health} is
   * answered and closes its connection, and one on any other path is refused with 503; requests on
   * {@code servletPath} are left to McpEdgeFilter, which tells health requests apart by their body.
   */
  HttpHandler guard(HttpHandler next, Set<String> health, String servletPath) {
    return exchange -> {
      String path = exchange.getRequestPath();
      if (path.equals(servletPath) || !healthOnly()) {
        next.handleRequest(exchange);
        return;
      }
      exchange.setPersistent(false);
      if (health.contains(path)) {
        next.handleRequest(exchange);
        return;
      }
      LOG.debug("refused a request: over {} connections open", max - reserve);
      exchange.getResponseHeaders().put(Headers.RETRY_AFTER, "1");
      HttpHost.send(
          exchange,
          503,
          "text/plain; charset=utf-8",
          (refusal() + "\n").getBytes(StandardCharsets.UTF_8));
    };
  }
}
