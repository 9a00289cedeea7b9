package ca.helu.pallas.runtime.serve;

import java.time.Duration;
import java.util.List;

/**
 * How {@code serve} runs.
 *
 * @param bindAddress address every listener binds
 * @param onlyAgent serve this agent alone, without the registry (null: every agent + registry)
 * @param peerUrlTemplate URL of another agent's MCP endpoint; {name}, {dnsName} (name with _
 *     replaced by -) and {port} are replaced
 * @param drainTimeout how long shutdown waits for calls in progress
 * @param allowedOrigins browser origins accepted besides localhost
 */
public record ServeOptions(
    String bindAddress,
    String onlyAgent,
    String peerUrlTemplate,
    Duration drainTimeout,
    List<String> allowedOrigins) {
  public static final String LOCAL_PEERS = "http://127.0.0.1:{port}/mcp";

  public static ServeOptions local() {
    return new ServeOptions("0.0.0.0", null, LOCAL_PEERS, Duration.ofSeconds(30), List.of());
  }

  public ServeOptions withBindAddress(String address) {
    return new ServeOptions(address, onlyAgent, peerUrlTemplate, drainTimeout, allowedOrigins);
  }
}
