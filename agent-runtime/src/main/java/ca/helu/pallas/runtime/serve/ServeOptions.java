package ca.helu.pallas.runtime.serve;

import java.time.Duration;
import java.util.List;

/**
 * How {@code serve} runs.
 *
 * @param bindAddress address every listener binds
 * @param onlyAgent serve this agent alone, without the registry (null: every agent + registry)
 * @param cluster reach other agents by their Kubernetes Service names (docs/operator.md), not on
 *     127.0.0.1
 * @param drainTimeout how long shutdown waits for calls in progress
 * @param allowedOrigins browser origins accepted besides localhost
 */
public record ServeOptions(
    String bindAddress,
    String onlyAgent,
    boolean cluster,
    Duration drainTimeout,
    List<String> allowedOrigins) {
  public static ServeOptions local() {
    return new ServeOptions("0.0.0.0", null, false, Duration.ofSeconds(30), List.of());
  }

  public ServeOptions withBindAddress(String address) {
    return new ServeOptions(address, onlyAgent, cluster, drainTimeout, allowedOrigins);
  }
}
