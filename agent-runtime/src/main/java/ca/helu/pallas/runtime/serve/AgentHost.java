package ca.helu.pallas.runtime.serve;

import ca.helu.pallas.runtime.http.EdgeLimits;
import ca.helu.pallas.runtime.http.HttpHost;
import ca.helu.pallas.runtime.http.McpEdgeFilter;
import ca.helu.pallas.runtime.mcp.AgentMcpServer;
import ca.helu.pallas.runtime.mcp.InFlight;
import ca.helu.pallas.runtime.metrics.PallasMetrics;
import java.time.Duration;

/** One agent on its port: /mcp, /metrics, /livez, /readyz. */
public final class AgentHost implements AutoCloseable {
  private final String agent;
  private final AgentMcpServer mcp;
  private final InFlight inFlight;
  private final HttpHost http;
  private final AutoCloseable resources;
  private final boolean handOverSessions;
  private volatile boolean started;

  /**
   * @param resources closed after the server stops (downstream clients, health probes)
   * @param handOverSessions behind a Service with other replicas: while draining, a call on an
   *     existing session is answered "session gone" so the client starts a new one on a ready pod
   */
  public AgentHost(
      String agent,
      String bindAddress,
      int port,
      AgentMcpServer mcp,
      InFlight inFlight,
      PallasMetrics metrics,
      AutoCloseable resources,
      Duration bodyTimeout,
      EdgeLimits limits,
      boolean handOverSessions) {
    this.agent = agent;
    this.mcp = mcp;
    this.inFlight = inFlight;
    this.resources = resources;
    this.handOverSessions = handOverSessions;
    this.http =
        HttpHost.builder(bindAddress, port)
            .bodyTimeout(bodyTimeout)
            .drain(new McpEdgeFilter.Drain(inFlight::draining, handOverSessions))
            .limits(limits, mcp.sessions())
            .servlet("/mcp", mcp.servlet())
            .exact("/metrics", HttpHost.metrics(metrics::scrape, PallasMetrics.CONTENT_TYPE))
            .exact("/livez", HttpHost.probe(() -> true))
            .exact("/readyz", HttpHost.probe(() -> started && !inFlight.draining()))
            .build();
  }

  public String agent() {
    return agent;
  }

  public AgentHost start() {
    http.start();
    started = true;
    return this;
  }

  public int port() {
    return http.port();
  }

  /** How long the answers to calls cut by the drain deadline may take to be sent. */
  static final Duration ANSWER_GRACE = Duration.ofSeconds(5);

  /**
   * With hand-over (an agent pod), how long the drained server keeps answering "session gone"
   * before it closes: a client that has just received its last answer (a response that began before
   * the drain, so without "Connection: close") sends its next call on the same connection at once,
   * and must get that answer rather than a closed connection (docs/runtime.md, "Errors callers
   * see").
   */
  static final Duration HAND_OVER_LINGER = Duration.ofSeconds(1);

  /** Stops taking calls, waits for running ones up to {@code timeout}; true if all finished. */
  public boolean drain(Duration timeout) throws InterruptedException {
    long start = System.nanoTime();
    boolean turnsDone = inFlight.drain(timeout);
    boolean done;
    if (turnsDone) {
      Duration left = timeout.minusNanos(System.nanoTime() - start);
      done = http.awaitPostsDone(left.isNegative() ? Duration.ZERO : left);
    } else {
      // the deadline passed: answer the calls still queued or running before closing
      inFlight.expire();
      http.awaitPostsDone(ANSWER_GRACE);
      done = false;
    }
    if (handOverSessions) {
      Thread.sleep(HAND_OVER_LINGER);
    }
    return done;
  }

  @Override
  public void close() {
    started = false;
    try {
      mcp.close();
    } finally {
      http.close();
      try {
        resources.close();
      } catch (Exception e) {
        // closing anyway
      }
    }
  }
}
