package ca.helu.pallas.runtime.http;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.util.JsonRecyclerPools;
import java.time.Duration;
import java.util.Locale;

/**
 * What the MCP endpoints of one process hold at once (docs/runtime.md, "Limits"); past each bound a
 * new request is refused with 503, {@code Retry-After} and a JSON-RPC error naming the bound. The
 * requests and body bytes are shared by every agent the process serves; sessions and connections
 * are per agent. {@link #derived} gives the bounds that fit the heap ({@link MemoryBudget}).
 *
 * @param maxSessions MCP sessions an agent holds; past it the oldest idle session makes room, and
 *     an initialize is refused only when none is idle
 * @param sessionIdle a session without a request or an open stream for this long is closed
 * @param maxConcurrentRequests JSON-RPC requests answered at once, besides initialize, ping and
 *     get_health (which stay answerable when the agent is busy)
 * @param maxBodyBytes the largest request body
 * @param maxBodyBytesHeld request body bytes held at once, from the first byte read until the
 *     request is answered; at least {@code maxBodyBytes}, so one largest body fits
 * @param maxConnections connections an agent's port holds open; past it a new one waits in the
 *     kernel's backlog, and its last {@link #connectionReserve()} serve health requests only
 * @param maxHistoryChars characters of conversation history every agent of the process holds
 *     together; each agent's share is this divided by the agents the process serves
 */
public record EdgeLimits(
    int maxSessions,
    Duration sessionIdle,
    int maxConcurrentRequests,
    long maxBodyBytes,
    long maxBodyBytesHeld,
    int maxConnections,
    long maxHistoryChars) {
  public static final int DEFAULT_MAX_SESSIONS = 10_000;
  public static final Duration DEFAULT_SESSION_IDLE = Duration.ofMinutes(30);
  public static final int DEFAULT_MAX_CONNECTIONS = 4096;

  /** The bounds derived from this process's heap (after the constants it is made of). */
  public static final EdgeLimits DEFAULT = derived(MemoryBudget.ofThisProcess());

  /** The bounds that fit {@code memory}, with the default session and connection caps. */
  public static EdgeLimits derived(MemoryBudget memory) {
    return new EdgeLimits(
        DEFAULT_MAX_SESSIONS,
        DEFAULT_SESSION_IDLE,
        memory.maxConcurrentRequests(),
        memory.maxBodyBytes(),
        memory.bodyBytesHeld(),
        DEFAULT_MAX_CONNECTIONS,
        memory.historyChars());
  }

  /** The fewest connections kept for health requests, and so the least room left for others. */
  static final int MIN_CONNECTION_RESERVE = 8;

  public EdgeLimits {
    if (maxSessions < 1
        || maxConcurrentRequests < 1
        || !sessionIdle.isPositive()
        || maxHistoryChars < 1) {
      throw new IllegalArgumentException(
          "the session limit, the request limit, the idle timeout and the history limit must be"
              + " positive");
    }
    if (maxBodyBytes < 1 || maxBodyBytes > MemoryBudget.MAX_BODY_BYTES) {
      throw new IllegalArgumentException(
          "the largest body must be between 1 byte and "
              + (MemoryBudget.MAX_BODY_BYTES >> 20)
              + " MiB");
    }
    if (maxBodyBytesHeld < maxBodyBytes || maxBodyBytesHeld > Integer.MAX_VALUE) {
      throw new IllegalArgumentException(
          "the bytes of bodies held at once must be between the largest body ("
              + mib(maxBodyBytes)
              + ") and 2047 MiB");
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

  /**
   * JSON whose only size limit is the body's: a long string is not a parse error. Its parsers' and
   * generators' buffers come from one pool shared by all threads: requests are served on virtual
   * threads ({@link HttpHost}), a new one each, and Jackson's default pool, one set of buffers per
   * thread, would give every request new ones (measured: 8 to 16 KiB a request, a young
   * collection's worth every few hundred calls; docs/benchmarks.md, "The registry's MCP endpoint").
   */
  public JsonFactory jsonFactory() {
    return JsonFactory.builder()
        .streamReadConstraints(
            StreamReadConstraints.builder().maxStringLength((int) maxBodyBytes).build())
        .recyclerPool(JsonRecyclerPools.sharedConcurrentDequePool())
        .build();
  }

  /** A number of bytes in MiB as the docs and errors give it: "15 MiB", "1.5 MiB". */
  public static String mib(long bytes) {
    double mib = bytes / (double) (1 << 20);
    return (mib == Math.rint(mib)
            ? String.valueOf((long) mib)
            : String.format(Locale.ROOT, "%.1f", mib))
        + " MiB";
  }
}
