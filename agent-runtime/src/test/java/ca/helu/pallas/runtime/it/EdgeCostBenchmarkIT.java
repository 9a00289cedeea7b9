package ca.helu.pallas.runtime.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.runtime.testing.Benchmarks;
import ca.helu.pallas.runtime.testing.FakeLlmProcess;
import ca.helu.pallas.runtime.testing.JaegerServer;
import ca.helu.pallas.runtime.testing.KeycloakServer;
import ca.helu.pallas.runtime.testing.RawMcp;
import ca.helu.pallas.runtime.testing.RunningFleet;
import ca.helu.pallas.runtime.tracing.SpanKeys;
import ca.helu.pallas.runtime.tracing.Tracing;
import com.sun.management.OperatingSystemMXBean;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What inbound JWT validation and tracing cost a call (issue 18 §6, issue 19 §3;
 * docs/benchmarks.md, "Authentication and tracing"); it prints the figures. In one JVM, so that all
 * share the code the JIT compiled, three fleets side by side: one plain, one validating a real
 * Keycloak's JWTs on every call, one tracing every call (100 % sampling) to a real Jaeger, its
 * spans exported within the call's round; and the plain fleet called with the token too, which it
 * does not read (what carrying a token costs), and a second plain fleet (what the harness makes of
 * two equal kinds: its noise). One raw-HTTP client calls the five in turn, first until the JVM's
 * CPU per call settles, then in rounds ordered so that each kind follows each other kind equally
 * often ({@link #orders}). Measured: the CPU per call of this JVM (the runtime and the client, the
 * same for all five) and of its server threads (the client's left out, and the garbage collector's
 * and the JIT's, which are no Java threads), and the latency. Twice: on the passthrough model, and
 * on a model over HTTP.
 */
class EdgeCostBenchmarkIT {
  @RegisterExtension static final KeycloakServer KEYCLOAK = new KeycloakServer();
  @RegisterExtension static final JaegerServer JAEGER = new JaegerServer();
  private static final OperatingSystemMXBean OS =
      (OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

  /**
   * Calls per fleet and round, each round on a session of its own. Many short rounds rather than a
   * few long ones: a ratio's median over the rounds then moves less with what the JIT and the
   * machine do meanwhile (12 rounds of 1,000 calls left an A/A pair of the plain fleet 2 to 4 %
   * apart, and one 40-character header 7 %). The JVM counts its CPU in the kernel's ticks of 10 ms,
   * about 4 % of a round's; the server threads' CPU is counted in nanoseconds.
   */
  private static final int CALLS = 400;

  /** A multiple of the rows of {@link #orders} for five kinds (10). */
  private static final int ROUNDS = 40;

  /**
   * Before the rounds, the fleets are called in turn, a round of each, until the CPU per call of a
   * turn is within {@link #SETTLED} of the turn's before, after at least {@link #WARM_UP_AT_LEAST}
   * turns: the JIT compiles the calls' paths for a long while (the CPU per call halves over the
   * first ten thousand calls).
   */
  private static final int WARM_UP_AT_LEAST = 20;

  private static final int WARM_UP_AT_MOST = 60;
  private static final double SETTLED = 0.03;

  private static final String FLEET =
      """
      apiVersion: pallas.helu.ca/v1alpha1
      kind: PallasDeployment
      metadata: {name: NAME}
      spec:
        host: 127.0.0.1
        registry: {port: ${port:registry}}
        defaultModel: passthrough
        agents:
          - {name: helper, port: ${port:helper}, instanceScope: connection}
      """;

  /**
   * The same fleet on a model reached over HTTP: an OpenAI-compatible fake in a process of its own
   * ({@link FakeLlmProcess}), whose work is not counted, answering a sentence. Every call is a
   * conversation of its own (request scope), so the model's request holds one message: the smallest
   * call an agent on a model makes.
   */
  private static final String MODEL_FLEET =
      FLEET
          .replace(
              "defaultModel: passthrough",
              """
              providers:
                  openai: {baseUrl: "LLM", apiKey: {value: not-a-secret}}
                defaultModel: openai.bench\
              """)
          .replace("instanceScope: connection", "instanceScope: request");

  /** On the passthrough model: the calls do nothing else, so what the edge adds shows most. */
  @Test
  void measureJwtValidationAndTracing() throws Exception {
    measure("", FLEET, "hi");
  }

  /** On a model over HTTP, as an agent in production calls one ({@link #MODEL_FLEET}). */
  @Test
  void measureOnAModelOverHttp() throws Exception {
    try (FakeLlmProcess llm = FakeLlmProcess.start("bench")) {
      measure(
          "on a model over HTTP: ",
          MODEL_FLEET.replace("LLM", llm.baseUrl()),
          FakeLlmProcess.ANSWER);
    }
  }

  /** {@code answer}: what each fleet answers {@code send_message("hi")} with. */
  private static void measure(String label, String fleet, String answer) throws Exception {
    String secured =
        fleet.replace("NAME", "jwt")
            + """
              auth:
                oidc:
                  issuerUrl: %s
                  audience: https://agents.pallas.test/{agent}
            """
                .formatted(KEYCLOAK.issuer());
    try (RunningFleet plain = RunningFleet.start(fleet.replace("NAME", "plain"));
        RunningFleet jwt = RunningFleet.start(secured);
        RunningFleet another = RunningFleet.start(fleet.replace("NAME", "another"));
        RunningFleet traced =
            RunningFleet.start(
                fleet.replace("NAME", "traced"),
                // every call sampled: the ratio's default is 1
                Map.of(
                    "OTEL_EXPORTER_OTLP_ENDPOINT",
                    JAEGER.otlpEndpoint(),
                    "OTEL_SERVICE_NAME",
                    "pallas-cost"))) {
      String token = KEYCLOAK.clientToken("daedalus", "daedalus-secret");
      Map<String, Kind> kinds = new LinkedHashMap<>();
      kinds.put("plain", new Kind(plain, null));
      kinds.put("JWT validated", new Kind(jwt, token));
      // what carrying the token costs, validated or not: the plain fleet takes no token and leaves
      // this one alone
      kinds.put("plain, the token sent", new Kind(plain, token));
      kinds.put("traced (100 %)", new Kind(traced, null));
      // a fleet as plain as "plain": how far apart the harness puts two equal kinds (the others
      // are each a fleet of their own too; the plain fleet called as "plain" once more, as before,
      // measured only the order of the rounds)
      kinds.put("another plain fleet (the harness's noise)", new Kind(another, null));
      warmUp(kinds.values());
      List<Kind> all = List.copyOf(kinds.values());
      List<int[]> orders = orders(all.size());
      for (int round = 0; round < ROUNDS; round++) {
        for (int k : orders.get(round % orders.size())) {
          all.get(k).round(true);
        }
      }
      long n = (long) CALLS * ROUNDS;
      Kind base = kinds.get("plain");
      kinds.forEach((name, kind) ->
          System.out.printf(
              "edge cost benchmark: %s%s: CPU per call of this JVM %d us (%.3fx plain; median of"
                  + " the rounds' ratios %.3fx), of its server threads %d us (%.3fx; %.3fx), p50"
                  + " %.2f ms, p99 %.2f ms (%d calls in %d rounds, the order balanced; token of %d"
                  + " characters)%n",
              label,
              name,
              kind.cpu / n / 1000,
              (double) kind.cpu / base.cpu,
              medianRatio(kind.rounds, base.rounds),
              kind.serverCpu / n / 1000,
              (double) kind.serverCpu / base.serverCpu,
              medianRatio(kind.serverRounds, base.serverRounds),
              Benchmarks.ms(Benchmarks.percentile(kind.nanos, 50)),
              Benchmarks.ms(Benchmarks.percentile(kind.nanos, 99)),
              n,
              ROUNDS,
              token.length()));
      long noop = noopSpansNanos();
      System.out.printf(
          "edge cost benchmark: %stracing not configured: the no-op spans of a call cost %d ns of"
              + " CPU (%.4f %% of a plain call's)%n",
          label, noop, 100.0 * noop / (base.cpu / n));
      kinds.values().forEach(k -> assertThat(k.nanos).hasSize((int) n));
      // the calls were what they say: the fleets answer as their model does, the secured fleet
      // refuses a call without its token, and the traced calls did reach Jaeger
      for (Kind kind : kinds.values()) {
        assertThat(
                RawMcp.open(kind.url, kind.bearer)
                    .callTool("send_message", Map.of("message", "hi"))
                    .path("content")
                    .path(0)
                    .path("text")
                    .asText())
            .isEqualTo(answer);
      }
      assertThat(
              RawMcp.open(kinds.get("JWT validated").url, null)
                  .post(RawMcp.toolCall(7, "send_message", Map.of("message", "hi")))
                  .statusCode())
          .isEqualTo(401);
      await().atMost(Duration.ofSeconds(30)).until(() -> JAEGER.services().contains("pallas-cost"));
    }
  }

  /**
   * The kinds' order in each round, a Williams design: over its rows each kind comes at each place
   * and right after each other kind equally often (once each for an even number of kinds, twice for
   * an odd one, with the rows reversed). A kind's round pays for what the round before it left: the
   * garbage to collect, the caches it filled, spans still being exported. With the order rotated,
   * as before, each kind always followed the same one (the plain fleet, for one, always followed
   * itself, called as "plain" once more, the harness's former control).
   */
  static List<int[]> orders(int kinds) {
    int[] first = new int[kinds];
    for (int i = 0, low = 0, high = kinds - 1; i < kinds; i++) {
      first[i] = i % 2 == 0 ? low++ : high--;
    }
    List<int[]> rows = new ArrayList<>();
    for (int shift = 0; shift < kinds; shift++) {
      int[] row = new int[kinds];
      for (int i = 0; i < kinds; i++) {
        row[i] = (first[i] + shift) % kinds;
      }
      rows.add(row);
    }
    if (kinds % 2 == 1) {
      for (int shift = 0; shift < kinds; shift++) {
        int[] reversed = new int[kinds];
        for (int i = 0; i < kinds; i++) {
          reversed[i] = rows.get(shift)[kinds - 1 - i];
        }
        rows.add(reversed);
      }
    }
    return rows;
  }

  /** Rounds of each kind in turn until the CPU per call settles (WARM_UP_AT_LEAST). */
  private static void warmUp(Collection<Kind> kinds) throws Exception {
    double before = Double.MAX_VALUE;
    for (int turn = 1; turn <= WARM_UP_AT_MOST; turn++) {
      long cpu = OS.getProcessCpuTime();
      for (Kind kind : kinds) {
        kind.round(false);
      }
      double perCall = (double) (OS.getProcessCpuTime() - cpu) / (CALLS * kinds.size());
      if (turn >= WARM_UP_AT_LEAST && Math.abs(perCall - before) <= SETTLED * before) {
        System.out.printf(
            "edge cost benchmark: settled after %d calls of each fleet, at %.0f us per call%n",
            turn * CALLS, perCall / 1000);
        return;
      }
      before = perCall;
    }
    System.out.printf(
        "edge cost benchmark: not settled after %d calls of each fleet%n", WARM_UP_AT_MOST * CALLS);
  }

  /**
   * CPU nanoseconds of what a call does with tracing not configured (Tracing.OFF): the span calls
   * of TurnHandler (server span, turn, a conversation wait that did not wait) on the no-op tracer,
   * each made current as there; the model and tool servers are not wrapped. Measured alone, on this
   * thread, after a warm-up.
   */
  private static long noopSpansNanos() {
    Tracer tracer = Tracing.OFF.tracer();
    int calls = 1_000_000;
    long valid = 0;
    long start = 0;
    for (int pass = 0; pass < 2; pass++) {
      start = THREADS.getCurrentThreadCpuTime();
      for (int i = 0; i < calls; i++) {
        Span server =
            tracer
                .spanBuilder("tools/call send_message")
                .setParent(Context.root())
                .setSpanKind(SpanKind.SERVER)
                .setAttribute(SpanKeys.MCP_METHOD, "tools/call")
                .setAttribute(SpanKeys.OPERATION, "execute_tool")
                .setAttribute(SpanKeys.TOOL, "send_message")
                .startSpan();
        try (Scope s = server.makeCurrent()) {
          valid += Span.current().getSpanContext().isValid() ? 1 : 0;
          Span turn =
              tracer
                  .spanBuilder("invoke_agent helper")
                  .setAttribute(SpanKeys.OPERATION, "invoke_agent")
                  .setAttribute(SpanKeys.AGENT, "helper")
                  .setAttribute(SpanKeys.PROVIDER, "passthrough")
                  .setAttribute(SpanKeys.REQUEST_MODEL, "passthrough")
                  .setAttribute(SpanKeys.SCOPE, "connection")
                  .startSpan();
          try (Scope t = turn.makeCurrent()) {
            Tracing.OFF.conversationWait(0).end();
          } finally {
            turn.end();
          }
        } finally {
          server.end();
        }
      }
    }
    assertThat(valid).as("no-op spans are never valid").isZero();
    return (THREADS.getCurrentThreadCpuTime() - start) / calls;
  }

  /**
   * The median over the rounds of a kind's CPU in a round against the plain fleet's in the same
   * round: a round on a loaded machine moves both, so the ratios vary less than the totals do.
   */
  private static double medianRatio(List<Long> kind, List<Long> base) {
    List<Double> ratios = new ArrayList<>();
    for (int i = 0; i < kind.size(); i++) {
      ratios.add((double) kind.get(i) / base.get(i));
    }
    ratios.sort(null);
    int mid = ratios.size() / 2;
    return ratios.size() % 2 == 1 ? ratios.get(mid) : (ratios.get(mid - 1) + ratios.get(mid)) / 2;
  }

  /**
   * The CPU time of each of this JVM's threads but the client's ({@code main}, which calls, and its
   * JDK HTTP client's, {@link RawMcp#clientThreads}), by id: the server's (the runtime's,
   * Undertow's, the span exporter's and its HTTP client's, the model's HTTP client's). The JVM's
   * own threads, its garbage collector and JIT compilers, are not Java threads and are not among
   * them.
   */
  private static Map<Long, Long> serverThreadsCpu() {
    Map<Long, Long> cpu = new HashMap<>();
    String client = RawMcp.clientThreads();
    for (ThreadInfo thread : THREADS.getThreadInfo(THREADS.getAllThreadIds())) {
      if (thread != null
          && !thread.getThreadName().equals("main")
          && !thread.getThreadName().startsWith(client)) {
        long nanos = THREADS.getThreadCpuTime(thread.getThreadId());
        if (nanos >= 0) {
          cpu.put(thread.getThreadId(), nanos);
        }
      }
    }
    return cpu;
  }

  /** The CPU the server's threads spent since {@code before} (a thread ended since is not). */
  private static long serverCpuSince(Map<Long, Long> before) {
    long spent = 0;
    for (Map.Entry<Long, Long> now : serverThreadsCpu().entrySet()) {
      spent += now.getValue() - before.getOrDefault(now.getKey(), 0L);
    }
    return spent;
  }

  private static final class Kind {
    final RunningFleet fleet;
    final String url;
    final String bearer;
    final List<Long> nanos = new ArrayList<>();
    final List<Long> rounds = new ArrayList<>();
    final List<Long> serverRounds = new ArrayList<>();
    long cpu;
    long serverCpu;

    Kind(RunningFleet fleet, String bearer) {
      this.fleet = fleet;
      this.url = fleet.mcpUrl("helper");
      this.bearer = bearer;
    }

    /**
     * {@link #CALLS} calls on a new session, their spans exported; counted with {@code counted}.
     */
    void round(boolean counted) throws Exception {
      RawMcp session = RawMcp.open(url, bearer);
      long start = OS.getProcessCpuTime();
      Map<Long, Long> threads = serverThreadsCpu();
      List<Long> latencies = Benchmarks.calls(session, CALLS);
      fleet.flushTraces();
      long spent = OS.getProcessCpuTime() - start;
      long server = serverCpuSince(threads);
      session.delete();
      if (counted) {
        nanos.addAll(latencies);
        cpu += spent;
        rounds.add(spent);
        serverCpu += server;
        serverRounds.add(server);
      }
    }
  }
}
