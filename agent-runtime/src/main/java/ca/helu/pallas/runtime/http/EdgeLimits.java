package ca.helu.pallas.runtime.http;

import java.time.Duration;

/**
 * What one agent's MCP endpoint holds at once (docs/runtime.md, "Limits"); past each bound a new
 * request is refused with 503, {@code Retry-After} and a JSON-RPC error naming the bound.
 *
 * @param maxSessions MCP sessions the agent holds; an initialize past it is refused
 * @param sessionIdle a session without a request or an open stream for this long is closed
 * @param maxConcurrentRequests JSON-RPC requests answered at once, besides initialize, ping and
 *     get_health (which stay answerable when the agent is busy)
 * @param maxBodyBytesHeld request body bytes held at once, from the first byte read until the
 *     request is answered; at least {@link HttpHost#MAX_BODY_BYTES}, so one largest body fits
 * @param maxConnections connections the agent's port holds open; past it a new one waits in the
 *     kernel's backlog, and its last {@link #connectionReserve()} serve health requests only
 */
public record EdgeLimits(
    int maxSessions,
    Duration sessionIdle,
    int maxConcurrentRequests,
    long maxBodyBytesHeld,
    int maxConnections) {
  public static final EdgeLimits DEFAULT =
      new EdgeLimits(10_000, Duration.ofMinutes(30), 512, 128L << 20, 4096);

  /** The fewest connections kept for health requests, and so the least room left for others. */
  static final int MIN_CONNECTION_RESERVE = 8;

  public EdgeLimits {
    if (maxSessions < 1 || maxConcurrentRequests < 1 || !sessionIdle.isPositive()) {
      throw new IllegalArgumentException(
          "the session limit, the request limit and the idle timeout must be positive");
    }
    if (maxBodyBytesHeld < HttpHost.MAX_BODY_BYTES || maxBodyBytesHeld > Integer.MAX_VALUE) {
      throw new IllegalArgumentException(
          "the bytes of bodies held at once must be between the largest body ("
              + (HttpHost.MAX_BODY_BYTES >> 20)
              + " MiB) and 2047 MiB");
    }
    if (maxConnections < 2 * MIN_CONNECTION_RESERVE) {
      throw new IllegalArgumentException(
          "the connection limit must be at least "
              + 2 * MIN_CONNECTION_RESERVE
              + ": "
              + MIN_CONNECTION_RESERVE
              + " of them are kept for health checks");
    }
  }

  /**
   * The connections kept for health requests (docs/runtime.md, "Connections"): max(8, 1/16 of
   * {@link #maxConnections}), 256 of the default 4096.
   */
  public int connectionReserve() {
    return Math.max(MIN_CONNECTION_RESERVE, maxConnections / 16);
  }
}
