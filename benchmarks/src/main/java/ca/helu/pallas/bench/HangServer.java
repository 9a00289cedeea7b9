package ca.helu.pallas.bench;

import ca.helu.pallas.runtime.http.HttpHost;

/** A downstream server that accepts connections and never answers. */
final class HangServer implements AutoCloseable {
  private final HttpHost host;

  private HangServer(HttpHost host) {
    this.host = host;
  }

  static HangServer start(int port) {
    return new HangServer(
        HttpHost.builder("127.0.0.1", port)
            .exact("/mcp", e -> e.dispatch(io.undertow.util.SameThreadExecutor.INSTANCE, () -> {}))
            .build()
            .start());
  }

  @Override
  public void close() {
    host.close();
  }
}
