package ca.helu.pallas.runtime.serve;

import ca.helu.pallas.runtime.auth.InboundAuth;
import ca.helu.pallas.runtime.http.Drain;
import ca.helu.pallas.runtime.http.HttpHost;
import ca.helu.pallas.runtime.http.RequestPool;
import ca.helu.pallas.runtime.mcp.AgentMcpServer;
import ca.helu.pallas.runtime.mcp.InFlight;
import ca.helu.pallas.runtime.metrics.PallasMetrics;
import io.undertow.server.HttpHandler;
import java.time.Duration;
import java.util.function.UnaryOperator;

/**
 * One agent on its port: /mcp, /metrics, /livez, /readyz (docs/runtime.md, "Connections"); the
 * probe port, which answers for every agent of the process, is the {@link Fleet}'s.
 */
public final class AgentHost implements AutoCloseable {
  private final String agent;
  private final AgentMcpServer mcp;
  private final InFlight inFlight;
  private final HttpHost http;
  private final AutoCloseable resources;
  private final DrainMode drainMode;
  private volatile boolean started;

  /**
   * @param resources closed after the server stops (downstream clients, health probes)
   * @param drainMode what a call that reaches this replica while it drains gets (DrainMode)
   * @param auth who may call /mcp, and the metadata that says how (null: anyone)
   * @param scrape what its /metrics shows, in the content type given (PallasMetrics)
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
      RequestPool pool,
      DrainMode drainMode,
      InboundAuth auth,
      UnaryOperator<String> scrape) {
    this.agent = agent;
    this.mcp = mcp;
    this.inFlight = inFlight;
    this.resources = resources;
    this.drainMode = drainMode;
    HttpHandler livez = HttpHost.probe(() -> true);
    HttpHandler readyz = HttpHost.probe(this::ready);
    HttpHost.Builder builder = HttpHost.builder(bindAddress, port);
    if (auth != null) {
      builder.auth(auth, "/mcp");
    }
    this.http =
        builder
            .bodyTimeout(bodyTimeout)
            .drain(new Drain(inFlight::draining, drainMode == DrainMode.HAND_OVER))
            .limits(pool, mcp.sessions())
            .calls(mcp.calls())
            .servlet("/mcp", mcp.servlet())
            .resources(mcp::hasResource)
            // a scrape during a flood shows it (pallas_http_connections at the cap)
            .health("/metrics", HttpHost.metrics(PallasMetrics::contentType, scrape))
            .health("/livez", livez)
            .health("/readyz", readyz)
            .build();
    metrics.connections(agent, http::openConnections);
  }

  public String agent() {
    return agent;
  }

  public AgentHost start() {
    http.start();
    started = true;
    return this;
  }

  /** Serving MCP and not draining: what its /readyz answers (docs/runtime.md, "Connections"). */
  public boolean ready() {
    return started && !inFlight.draining();
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

  /**
   * Stops taking calls, waits for running ones up to {@code timeout}; true if all finished. Serving
   * while draining (DrainMode SERVE), it then ends the GET streams and waits for every client to
   * have moved to another replica (each response closes its connection), serving what still comes
   * meanwhile: closing with a connection open would fail the request that a client is sending on it
   * (issue 17 §5: "Service Unavailable: this server is shutting down" under load).
   */
  public boolean drain(Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    boolean turnsDone = inFlight.drain(timeout);
    if (turnsDone && drainMode == DrainMode.SERVE) {
      mcp.endListeningStreams();
      turnsDone = http.awaitConnectionsClosed(left(deadline));
    }
    boolean done;
    if (turnsDone) {
      done = http.awaitPostsDone(left(deadline));
    } else {
      // the deadline passed: answer the calls still queued or running before closing
      inFlight.expire();
      http.awaitPostsDone(ANSWER_GRACE);
      done = false;
    }
    if (drainMode == DrainMode.HAND_OVER) {
      Thread.sleep(HAND_OVER_LINGER);
    }
    return done;
  }

  private static Duration left(long deadline) {
    return Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
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
