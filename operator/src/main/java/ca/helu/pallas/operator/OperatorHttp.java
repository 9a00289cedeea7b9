package ca.helu.pallas.operator;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Executors;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/** The operator's /metrics (Prometheus text), /livez and /readyz, on one port. */
final class OperatorHttp implements AutoCloseable {
  private static final String PROMETHEUS = "text/plain; version=0.0.4; charset=utf-8";

  private final HttpServer server;

  OperatorHttp(int port, Supplier<String> metrics, BooleanSupplier live, BooleanSupplier ready)
      throws IOException {
    server = HttpServer.create(new InetSocketAddress(port), 0);
    server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
    server.createContext("/metrics", ex -> respond(ex, 200, PROMETHEUS, metrics.get()));
    server.createContext("/livez", ex -> probe(ex, live));
    server.createContext("/readyz", ex -> probe(ex, ready));
  }

  OperatorHttp start() {
    server.start();
    return this;
  }

  int port() {
    return server.getAddress().getPort();
  }

  private static void probe(HttpExchange ex, BooleanSupplier check) throws IOException {
    boolean ok = check.getAsBoolean();
    respond(ex, ok ? 200 : 503, "text/plain", ok ? "ok\n" : "not ready\n");
  }

  private static void respond(HttpExchange ex, int status, String type, String body)
      throws IOException {
    try (ex) {
      if (!"GET".equals(ex.getRequestMethod()) && !"HEAD".equals(ex.getRequestMethod())) {
        ex.sendResponseHeaders(405, -1);
        return;
      }
      byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
      ex.getResponseHeaders().set("Content-Type", type);
      ex.sendResponseHeaders(status, bytes.length);
      try (OutputStream out = ex.getResponseBody()) {
        out.write(bytes);
      }
    }
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
