package ca.helu.pallas.runtime.testing;

import ca.helu.pallas.api.ManifestParser;
import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.runtime.config.Environment;
import ca.helu.pallas.runtime.metrics.PallasMetrics;
import ca.helu.pallas.runtime.serve.DefaultAgentParts;
import ca.helu.pallas.runtime.serve.Fleet;
import ca.helu.pallas.runtime.serve.ServeOptions;
import ca.helu.pallas.runtime.store.HistoryStore;
import ca.helu.pallas.runtime.store.MemoryHistoryStore;
import ca.helu.pallas.runtime.store.SessionStores;
import ca.helu.pallas.runtime.tracing.Tracing;
import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A whole PallasDeployment served in this JVM on free ports, exactly as {@code serve} runs it.
 * Manifests use placeholders {@code ${port:NAME}} that become free ports.
 */
public final class RunningFleet implements AutoCloseable {
  private final Fleet fleet;
  private final DefaultAgentParts parts;
  private final PallasDeployment deployment;
  private final PallasMetrics metrics;
  private final HistoryStore histories;

  private RunningFleet(
      String yaml,
      Map<String, String> env,
      ServeOptions options,
      DefaultAgentParts.Timings timings) {
    this(yaml, env, options, timings, null, SessionStores.inMemory());
  }

  private RunningFleet(
      String yaml,
      Map<String, String> env,
      ServeOptions options,
      DefaultAgentParts.Timings timings,
      Function<PallasMetrics, HistoryStore> store,
      SessionStores sessions) {
    deployment = ManifestParser.parse(yaml, "test manifest");
    // as serve makes them (ServeCommand): exemplars with tracing on
    metrics = new PallasMetrics(Tracing.configured(new Environment(env)));
    metrics.bindJvmMetrics();
    parts = new DefaultAgentParts(new Environment(env), metrics, timings);
    histories = store == null ? null : store.apply(metrics);
    fleet =
        new Fleet(
            deployment,
            options,
            metrics,
            parts,
            histories == null ? new MemoryHistoryStore() : histories,
            sessions != null ? sessions : histories.sessionStores());
    parts.preflight(deployment.getSpec(), fleet.served());
    fleet.start();
  }

  public static RunningFleet start(String yaml) {
    return start(yaml, Map.of());
  }

  public static RunningFleet start(String yaml, Map<String, String> env) {
    return start(yaml, env, DefaultAgentParts.Timings.DEFAULT);
  }

  public static RunningFleet start(
      String yaml, Map<String, String> env, DefaultAgentParts.Timings timings) {
    return new RunningFleet(
        withFreePorts(yaml), env, ServeOptions.local().withBindAddress("127.0.0.1"), timings);
  }

  /** A fleet served with options changed from the tests' defaults. */
  public static RunningFleet start(String yaml, UnaryOperator<ServeOptions> options) {
    return start(yaml, options, DefaultAgentParts.Timings.DEFAULT);
  }

  /** A fleet served with options and timings changed from the tests' defaults. */
  public static RunningFleet start(
      String yaml, UnaryOperator<ServeOptions> options, DefaultAgentParts.Timings timings) {
    return new RunningFleet(
        withFreePorts(yaml),
        Map.of(),
        options.apply(ServeOptions.local().withBindAddress("127.0.0.1")),
        timings);
  }

  /** A fleet served with this environment, options and timings. */
  public static RunningFleet start(
      String yaml,
      Map<String, String> env,
      UnaryOperator<ServeOptions> options,
      DefaultAgentParts.Timings timings) {
    return new RunningFleet(
        withFreePorts(yaml),
        env,
        options.apply(ServeOptions.local().withBindAddress("127.0.0.1")),
        timings);
  }

  /**
   * One replica of a fleet: its MCP sessions kept in {@code sessions}, which other replicas (other
   * fleets of the same manifest, on ports of their own) share, as the pods of an agent share a
   * database.
   */
  public static RunningFleet replica(String yaml, SessionStores sessions) {
    return replica(yaml, sessions, UnaryOperator.identity());
  }

  /** A replica served with options changed from the tests' defaults. */
  public static RunningFleet replica(
      String yaml, SessionStores sessions, UnaryOperator<ServeOptions> options) {
    return new RunningFleet(
        withFreePorts(yaml),
        Map.of(),
        options.apply(ServeOptions.local().withBindAddress("127.0.0.1")),
        DefaultAgentParts.Timings.DEFAULT,
        null,
        sessions);
  }

  /**
   * A fleet keeping its histories, and its MCP sessions, in the store {@code store} makes from the
   * fleet's metrics; the store is closed with the fleet.
   */
  public static RunningFleet start(
      String yaml, DefaultAgentParts.Timings timings, Function<PallasMetrics, HistoryStore> store) {
    return new RunningFleet(
        withFreePorts(yaml),
        Map.of(),
        ServeOptions.local().withBindAddress("127.0.0.1"),
        timings,
        store,
        null); // the store's own: PostgreSQL's sessions with PostgreSQL's histories
  }

  /** A fleet served with options changed from the tests' defaults and its histories in a store. */
  public static RunningFleet start(
      String yaml,
      UnaryOperator<ServeOptions> options,
      Function<PallasMetrics, HistoryStore> store) {
    return new RunningFleet(
        withFreePorts(yaml),
        Map.of(),
        options.apply(ServeOptions.local().withBindAddress("127.0.0.1")),
        DefaultAgentParts.Timings.DEFAULT,
        store,
        null);
  }

  /** Replaces each distinct ${port:NAME} with a free port. */
  public static String withFreePorts(String yaml) {
    Matcher m = Pattern.compile("\\$\\{port:([a-z0-9_-]+)}").matcher(yaml);
    Map<String, Integer> ports = new HashMap<>();
    StringBuilder out = new StringBuilder();
    while (m.find()) {
      int port =
          ports.computeIfAbsent(
              m.group(1),
              k -> {
                int p = unboundPort();
                while (ports.containsValue(p)) {
                  p = unboundPort();
                }
                return p;
              });
      m.appendReplacement(out, Integer.toString(port));
    }
    m.appendTail(out);
    return out.toString();
  }

  /**
   * A free port below the kernel's ephemeral range, for a port a test keeps unbound for a while (a
   * server that comes up later, or never): an ephemeral port could meanwhile become the local port
   * of some outbound connection.
   */
  public static int unboundPort() {
    Random random = new Random();
    for (int attempt = 0; attempt < 100; attempt++) {
      int port = 20000 + random.nextInt(12000);
      try (ServerSocket s = new ServerSocket(port)) {
        return port;
      } catch (IOException e) {
        // taken, try another
      }
    }
    throw new IllegalStateException("no free port in 20000-32000");
  }

  public static int freePort() {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  public String mcpUrl(String agent) {
    return "http://127.0.0.1:" + port(agent) + "/mcp";
  }

  public String baseUrl(String agent) {
    return "http://127.0.0.1:" + port(agent);
  }

  public int port(String agent) {
    return deployment.getSpec().portOf(deployment.getSpec().agent(agent).orElseThrow());
  }

  public String registryBase() {
    return "http://127.0.0.1:" + deployment.getSpec().effectiveRegistry().effectivePort();
  }

  /** What SIGTERM does to `serve`: refuse new calls, drain, answer the rest at the deadline. */
  public void drain(Duration timeout) {
    fleet.drainAndClose(timeout);
  }

  /** The manifest as the fleet parsed it, its ports filled in. */
  public PallasDeployment deployment() {
    return deployment;
  }

  /** Exports the spans the fleet's calls ended so far, when tracing is on. */
  public void flushTraces() {
    parts.tracing().flush();
  }

  public PallasMetrics metrics() {
    return metrics;
  }

  @Override
  public void close() {
    fleet.close();
    parts.close();
    if (histories != null) {
      histories.close();
    }
  }
}
