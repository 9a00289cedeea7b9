package ca.helu.pallas.runtime.downstream;

import ca.helu.pallas.runtime.health.CheckResult;
import ca.helu.pallas.runtime.health.Probe;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The downstream probe of docs/runtime.md, "Health": a session opened with the MCP client the
 * agent's tool calls use (initialize with the server's headers, then the initialized notification),
 * and closed at once, which ends it on the server (DELETE), so no server-side state stays behind;
 * it acts on nothing the server tells it meanwhile. A failure reads as a tool call's would ({@link
 * Failures}).
 */
public final class McpProbe implements Probe {
  public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(3);

  private final Supplier<HttpClient> http;
  private final Duration timeout;

  /**
   * @param http the client the agent's downstream calls share
   */
  public McpProbe(Supplier<HttpClient> http, Duration timeout) {
    this.http = http;
    this.timeout = timeout;
  }

  @Override
  public CheckResult probe(String url, Map<String, String> headers) {
    try {
      DownstreamSession.open(
              DownstreamSession.Endpoint.probe(url, headers, timeout, http), gone -> {})
          .close();
      return CheckResult.ok("reachable");
    } catch (RuntimeException e) {
      return CheckResult.failed(Failures.describe(e, timeout));
    }
  }
}
