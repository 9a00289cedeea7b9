package ca.helu.pallas.runtime.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.runtime.testing.Benchmarks;
import ca.helu.pallas.runtime.testing.JaegerServer;
import ca.helu.pallas.runtime.testing.KeycloakServer;
import ca.helu.pallas.runtime.testing.RawMcp;
import ca.helu.pallas.runtime.testing.RunningFleet;
import com.sun.management.OperatingSystemMXBean;
import java.lang.management.ManagementFactory;
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
                Map.of(
                    "OTEL_EXPORTER_OTLP_ENDPOINT", JAEGER.otlpEndpoint(),
                    "OTEL_SERVICE_NAME", "pallas-cost",
                    "OTEL_TRACES_SAMPLER", "always_on"))) {
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
          kind.cpu += OS.getProcessCpuTime() - cpu;
          session.delete();
        }
      }
      long n = (long) CALLS * ROUNDS;
      Kind base = kinds.get("plain");
      kinds.forEach((name, kind) ->
          System.out.printf(
              "edge cost benchmark: %s: CPU per call of this JVM %d us (%.3fx plain), p50 %.2f"
                  + " ms, p99 %.2f ms (%d calls in %d rounds, the order rotating)%n",
              name,
              kind.cpu / n / 1000,
              (double) kind.cpu / base.cpu,
              Benchmarks.ms(Benchmarks.percentile(kind.nanos, 50)),
              Benchmarks.ms(Benchmarks.percentile(kind.nanos, 99)),
              n,
              ROUNDS));
      kinds.values().forEach(k -> assertThat(k.nanos).hasSize((int) n));
      // the traced calls did reach Jaeger: the figures are of tracing that works
      await().atMost(Duration.ofSeconds(30)).until(() -> JAEGER.services().contains("pallas-cost"));
    }
  }

  private static final class Kind {
    final String url;
    final String bearer;
    final List<Long> nanos = new ArrayList<>();
    long cpu;

    Kind(String url, String bearer) {
      this.url = url;
      this.bearer = bearer;
    }
  }
}
