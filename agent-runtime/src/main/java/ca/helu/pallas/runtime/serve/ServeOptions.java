package ca.helu.pallas.runtime.serve;

import ca.helu.pallas.runtime.http.EdgeLimits;
import ca.helu.pallas.runtime.http.HttpHost;
import java.time.Duration;
import java.util.List;

/**
 * How {@code serve} runs.
 *
 * @param bindAddress address every listener binds
 * @param onlyAgent serve this agent alone, without the registry (null: every agent + registry)
 * @param cluster reach other agents by their Kubernetes Service names (docs/operator.md), not on
 *     127.0.0.1, and hand sessions over to other replicas when draining (docs/runtime.md, "Errors
 *     callers see")
 * @param drainTimeout how long shutdown waits for calls in progress
 * @param allowedOrigins browser origins accepted besides localhost
 * @param bodyTimeout how long a request's headers and body may take to arrive before the connection
 *     is closed (a stalled or trickling upload)
 * @param limits what each agent's MCP endpoint holds at once: sessions, requests, body bytes
 */
public record ServeOptions(
    String bindAddress,
    String onlyAgent,
    boolean cluster,
    Duration drainTimeout,
    List<String> allowedOrigins,
    Duration bodyTimeout,
    EdgeLimits limits) {
  public static ServeOptions local() {
    return new ServeOptions(
        "0.0.0.0",
        null,
        false,
        Duration.ofSeconds(30),
        List.of(),
        HttpHost.DEFAULT_BODY_TIMEOUT,
        EdgeLimits.DEFAULT);
  }

  public ServeOptions withBindAddress(String address) {
    return new ServeOptions(
        address, onlyAgent, cluster, drainTimeout, allowedOrigins, bodyTimeout, limits);
  }

  public ServeOptions withCluster(boolean inCluster) {
    return new ServeOptions(
        bindAddress, onlyAgent, inCluster, drainTimeout, allowedOrigins, bodyTimeout, limits);
  }

  public ServeOptions withBodyTimeout(Duration timeout) {
    return new ServeOptions(
        bindAddress, onlyAgent, cluster, drainTimeout, allowedOrigins, timeout, limits);
  }

  public ServeOptions withLimits(EdgeLimits edgeLimits) {
    return new ServeOptions(
        bindAddress, onlyAgent, cluster, drainTimeout, allowedOrigins, bodyTimeout, edgeLimits);
  }
}
