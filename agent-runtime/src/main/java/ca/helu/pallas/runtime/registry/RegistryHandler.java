package ca.helu.pallas.runtime.registry;

import ca.helu.pallas.runtime.http.HttpHost;
import io.undertow.server.HttpHandler;
import io.undertow.server.HttpServerExchange;
import io.undertow.util.Headers;
import java.nio.ByteBuffer;

/**
 * Serves the registry document from pre-rendered bytes, straight from the I/O thread: the document
 * changes only when the set of agents does, so each request costs one buffer copy.
 */
public final class RegistryHandler implements HttpHandler {
  public static final String PATH = "/.well-known/mcp/server.json";

  private volatile byte[] body;

  public RegistryHandler(byte[] body) {
    this.body = body;
  }

  /** Replaces what the next request sees. */
  public void update(byte[] body) {
    this.body = body;
  }

  public HttpHandler handler() {
    return HttpHost.getOnly(this);
  }

  @Override
  public void handleRequest(HttpServerExchange exchange) {
    exchange.getResponseHeaders().put(Headers.CONTENT_TYPE, "application/json");
    exchange.getResponseHeaders().put(Headers.CACHE_CONTROL, "no-cache");
    exchange.getResponseSender().send(ByteBuffer.wrap(body));
  }
}
