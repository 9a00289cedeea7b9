package ca.helu.pallas.runtime.registry;

import ca.helu.pallas.api.AgentSpec;
import ca.helu.pallas.api.PallasDeploymentSpec;
import ca.helu.pallas.runtime.http.HttpHost;
import ca.helu.pallas.runtime.metrics.PallasMetrics;
import java.time.Instant;
import java.util.function.Function;

/**
 * The registry on its port: server.json, the MCP Registry API ({@link RegistryApi}), /metrics,
 * /livez, /readyz.
 */
public final class RegistryServer implements AutoCloseable {
  private final RegistryHandler documents;
  private final RegistryApi api;
  private final HttpHost http;
  private final Function<AgentSpec, String> mcpUrl;

  public RegistryServer(
      String bindAddress,
      int port,
      PallasDeploymentSpec spec,
      Function<AgentSpec, String> mcpUrl,
      PallasMetrics metrics) {
    this.mcpUrl = mcpUrl;
    Instant now = Instant.now();
    this.documents = new RegistryHandler(RegistryDocument.render(spec, mcpUrl, now));
    this.api = new RegistryApi(RegistryDocument.entries(spec, mcpUrl, now));
    this.http =
        HttpHost.builder(bindAddress, port)
            .exact(RegistryHandler.PATH, documents.handler())
            .prefix(RegistryApi.PREFIX, api)
            .exact("/metrics", HttpHost.metrics(PallasMetrics::contentType, metrics::scrape))
            .exact("/livez", HttpHost.probe(() -> true))
            .exact("/readyz", HttpHost.probe(() -> true))
            .build();
  }

  public RegistryServer start() {
    http.start();
    return this;
  }

  public int port() {
    return http.port();
  }

  /** Publishes a new set of agents; the next request sees it. */
  public void update(PallasDeploymentSpec spec) {
    Instant now = Instant.now();
    documents.update(RegistryDocument.render(spec, mcpUrl, now));
    api.update(RegistryDocument.entries(spec, mcpUrl, now));
  }

  @Override
  public void close() {
    http.close();
  }
}
