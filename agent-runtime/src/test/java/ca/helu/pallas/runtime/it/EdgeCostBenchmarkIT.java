package ca.helu.pallas.runtime.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.runtime.testing.Benchmarks;
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
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What inbound JWT validation and tracing cost a call (issue 18 §6, issue 19 §3;
 * docs/benchmarks.md, "Authentication and tracing"); it prints the figures. In one JVM, three
 * fleets side by side: one plain, one validating a real Keycloak's JWTs on every call, one tracing
 * every call (100 % sampling) to a real Jaeger; measured in alternating rounds: the CPU per call of
 * this JVM (the runtime and its raw-HTTP client, the same client for all three) and the latency.
 */
class EdgeCostBenchmarkIT {
  @RegisterExtension static final KeycloakServer KEYCLOAK = new KeycloakServer();
  @RegisterExtension static final JaegerServer JAEGER = new JaegerServer();
  private static final OperatingSystemMXBean OS =
      (OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
  private static final int CALLS = 200;
  private static final int ROUNDS = 12;

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

  @Test
  void measureJwtValidationAndTracing() throws Exception {
    String secured =
        FLEET.replace("NAME", "jwt")
            + """
              auth:
                oidc:
                  issuerUrl: %s
                  audience: https://agents.pallas.test/{agent}
            """
                .formatted(KEYCLOAK.issuer());
    try (RunningFleet plain = RunningFleet.start(FLEET.replace("NAME", "plain"));
        RunningFleet jwt = RunningFleet.start(secured);
        RunningFleet traced =
            RunningFleet.start(
                FLEET.replace("NAME", "traced"),
                // every call sampled: the ratio's default is 1
                Map.of(
                    "OTEL_EXPORTER_OTLP_ENDPOINT",
                    JAEGER.otlpEndpoint(),
                    "OTEL_SERVICE_NAME",
                    "pallas-cost"))) {
      String token = KEYCLOAK.clientToken("daedalus", "daedalus-secret");
      Map<String, Kind> kinds = new LinkedHashMap<>();
      kinds.put("plain", new Kind(plain.mcpUrl("helper"), null));
      kinds.put("JWT validated", new Kind(jwt.mcpUrl("helper"), token));
      kinds.put("traced (100 %)", new Kind(traced.mcpUrl("helper"), null));
      for (Kind kind : kinds.values()) {
        Benchmarks.calls(RawMcp.open(kind.url, kind.bearer), 300); // warm-up: classes, pools, JIT
      }
      List<Kind> order = new ArrayList<>(kinds.values());
      for (int round = 0; round < ROUNDS; round++) {
        java.util.Collections.rotate(order, 1); // each kind first, second and third in turn
        for (Kind kind : order) {
          RawMcp session = RawMcp.open(kind.url, kind.bearer);
          long cpu = OS.getProcessCpuTime();
          kind.nanos.addAll(Benchmarks.calls(session, CALLS));
          long spent = OS.getProcessCpuTime() - cpu;
          kind.cpu += spent;
          kind.rounds.add(spent);
          session.delete();
        }
      }
      long n = (long) CALLS * ROUNDS;
      Kind base = kinds.get("plain");
      kinds.forEach((name, kind) ->
          System.out.printf(
              "edge cost benchmark: %s: CPU per call of this JVM %d us (%.3fx plain; median of"
                  + " the rounds' ratios %.3fx), p50 %.2f ms, p99 %.2f ms (%d calls in %d rounds,"
                  + " the order rotating)%n",
              name,
              kind.cpu / n / 1000,
              (double) kind.cpu / base.cpu,
              medianRatio(kind.rounds, base.rounds),
              Benchmarks.ms(Benchmarks.percentile(kind.nanos, 50)),
              Benchmarks.ms(Benchmarks.percentile(kind.nanos, 99)),
              n,
              ROUNDS));
      long noop = noopSpansNanos();
      System.out.printf(
          "edge cost benchmark: tracing not configured: the no-op spans of a call cost %d ns of"
              + " CPU (%.4f %% of a plain call's)%n",
          noop, 100.0 * noop / (base.cpu / n));
      kinds.values().forEach(k -> assertThat(k.nanos).hasSize((int) n));
      // the traced calls did reach Jaeger: the figures are of tracing that works
      await().atMost(Duration.ofSeconds(30)).until(() -> JAEGER.services().contains("pallas-cost"));
    }
  }

  /**
   * CPU nanoseconds of what a call does with tracing not configured (Tracing.OFF): the span calls
   * of TurnHandler (server span, turn, conversation wait) on the no-op tracer, each made current as
   * there; the model and tool servers are not wrapped. Measured alone, on this thread, after a
   * warm-up.
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
            Span wait = tracer.spanBuilder("wait conversation").startSpan();
            wait.setAttribute(SpanKeys.TURNS_AHEAD, 0);
            wait.end();
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

  private static final class Kind {
    final String url;
    final String bearer;
    final List<Long> nanos = new ArrayList<>();
    final List<Long> rounds = new ArrayList<>();
    long cpu;

    Kind(String url, String bearer) {
      this.url = url;
      this.bearer = bearer;
    }
  }
}
