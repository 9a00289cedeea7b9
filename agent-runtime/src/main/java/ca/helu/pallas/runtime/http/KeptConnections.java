package ca.helu.pallas.runtime.http;

import io.undertow.server.HttpHandler;
import io.undertow.server.ServerConnection;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.xnio.IoUtils;

/**
 * The connections of one listener that have carried a request, and which of them sit idle between
 * requests. A replica that drains while it serves (DrainMode SERVE) closes those its clients left
 * idle, so that it can stop once every client has moved to another replica instead of at its
 * deadline; a connection in use is closed by its own response (docs/runtime.md, "Errors callers
 * see").
 */
final class KeptConnections {
  private final Map<ServerConnection, Use> open = new ConcurrentHashMap<>();

  private static final class Use {
    final AtomicInteger requests = new AtomicInteger();
    volatile long idleSince = System.nanoTime();
  }

  /** {@code next}, noting each request's connection while the request is answered. */
  HttpHandler track(HttpHandler next) {
    return exchange -> {
      Use use =
          open.computeIfAbsent(
              exchange.getConnection(),
              connection -> {
                connection.addCloseListener(open::remove);
                return new Use();
              });
      use.requests.incrementAndGet();
      exchange.addExchangeCompleteListener((done, proceed) -> {
        use.idleSince = System.nanoTime();
        use.requests.decrementAndGet();
        proceed.proceed();
      });
      next.handleRequest(exchange);
    };
  }

  /** Closes every connection that has carried no request for {@code quiet}. */
  void closeIdle(Duration quiet) {
    long now = System.nanoTime();
    open.forEach((connection, use) -> {
      if (use.requests.get() == 0 && now - use.idleSince >= quiet.toNanos()) {
        IoUtils.safeClose(connection);
      }
    });
  }
}
