package ca.helu.pallas.runtime.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.runtime.serve.DefaultAgentParts;
import ca.helu.pallas.runtime.store.PostgresStore;
import ca.helu.pallas.runtime.store.StoreConfig;
import ca.helu.pallas.runtime.testing.FakeLlmServer;
import ca.helu.pallas.runtime.testing.PostgresServer;
import ca.helu.pallas.runtime.testing.RawMcp;
import ca.helu.pallas.runtime.testing.RunningFleet;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * No alert or dashboard panel on a metric that does not exist: every metric name the chart's
 * PrometheusRule and Grafana dashboard use (helm/pallas-operator/files/) is scraped from a running
 * agent that has answered calls, called a tool, used an LLM, failed to reach an MCP server and
 * keeps its histories in a conversation store (a real PostgreSQL).
 */
class MonitoringAssetsIT {
  @RegisterExtension static final PostgresServer PG = new PostgresServer();

  private static final Path FILES = Path.of("..", "helm", "pallas-operator", "files");

  /** Series Prometheus itself adds to every target. */
  private static final Set<String> FROM_PROMETHEUS = Set.of("up");

  private static final Pattern IDENTIFIER = Pattern.compile("[a-zA-Z_:][a-zA-Z0-9_:]*");
  private static final Set<String> KEYWORDS =
      Set.of("and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring");

  @Test
  void everyMetricTheAlertsAndTheDashboardUseIsExported() throws Exception {
    String store = PG.newDatabase();
    Map<String, String> expressions = expressions();
    assertThat(expressions).hasSizeGreaterThanOrEqualTo(8 + 11);
    Set<String> used = new TreeSet<>();
    expressions.values().forEach(e -> used.addAll(metricNames(e)));
    assertThat(used).contains("pallas_send_message_total", "up"); // the parser finds names

    try (FakeLlmServer llm = FakeLlmServer.openAi("m1");
        RunningFleet fleet =
            RunningFleet.start(
                """
                apiVersion: pallas.helu.ca/v1alpha1
                kind: PallasDeployment
                metadata: {name: monitoring}
                spec:
                  registry: {port: ${port:registry}}
                  providers:
                    openai: {baseUrl: "%s", apiKey: {value: test-key}}
                  mcpServers:
                    - {name: dead, url: "http://127.0.0.1:%d/mcp", timeoutSeconds: 1}
                  agents:
                    - {name: helper, port: ${port:helper}, model: passthrough}
                    - name: coordinator
                      port: ${port:coordinator}
                      model: openai.m1
                      servers: [helper, dead]
                      instanceScope: connection
                """
                    .formatted(llm.baseUrl(), RunningFleet.unboundPort()),
                DefaultAgentParts.Timings.DEFAULT,
                metrics ->
                    new PostgresStore(
                        StoreConfig.of(store, PostgresServer.USER, PostgresServer.PASSWORD),
                        "monitoring",
                        metrics::storeUp))) {
      llm.then(
          llm.toolCall("call_1", "helper__helper", "{\"message\":\"hi\"}"),
          llm.text("done", 20, 7));
      RawMcp coordinator = RawMcp.open(fleet.mcpUrl("coordinator"), null);
      assertThat(RawMcp.text(coordinator.callTool("send_message", Map.of("message", "go"))))
          .contains("done");
      coordinator.callTool("get_health", Map.of());

      // health, provider and downstream gauges are set by background probes
      String metricsUrl = fleet.baseUrl("coordinator") + "/metrics";
      await()
          .atMost(Duration.ofSeconds(30))
          .untilAsserted(() -> {
            Set<String> exported = exportedNames(scrape(metricsUrl));
            exported.addAll(FROM_PROMETHEUS);
            expressions.forEach((where, expr) ->
                assertThat(exported)
                    .as("metrics used by %s: %s", where, expr)
                    .containsAll(metricNames(expr)));
          });
    }
  }

  /**
   * Every dashboard query over a latency histogram asks Grafana for its exemplars, which link to
   * the trace each was observed in when tracing is on (docs/observability.md, "Exemplars").
   */
  @Test
  void everyLatencyPanelShowsExemplars() throws Exception {
    JsonNode dashboard = new ObjectMapper().readTree(FILES.resolve("dashboard.json").toFile());
    List<JsonNode> histograms = new ArrayList<>();
    for (JsonNode panel : dashboard.get("panels")) {
      for (JsonNode target : panel.path("targets")) {
        if (target.get("expr").asText().contains("_bucket")) {
          histograms.add(target);
        }
      }
    }
    assertThat(histograms)
        .isNotEmpty()
        .allSatisfy(t -> assertThat(t.path("exemplar").asBoolean()).as(t.toString()).isTrue());
  }

  /** Alert name or dashboard panel title -> PromQL. */
  private static Map<String, String> expressions() throws Exception {
    Map<String, String> out = new LinkedHashMap<>();
    JsonNode rules = new YAMLMapper().readTree(FILES.resolve("prometheus-rules.yaml").toFile());
    for (JsonNode group : rules.get("groups")) {
      for (JsonNode rule : group.get("rules")) {
        out.put("alert " + rule.get("alert").asText(), rule.get("expr").asText());
      }
    }
    JsonNode dashboard = new ObjectMapper().readTree(FILES.resolve("dashboard.json").toFile());
    for (JsonNode panel : dashboard.get("panels")) {
      int i = 0;
      for (JsonNode target : panel.path("targets")) {
        out.put("panel " + panel.get("title").asText() + " #" + i++, target.get("expr").asText());
      }
    }
    return out;
  }

  /** Metric names in a PromQL expression (label names, ranges, functions and keywords removed). */
  static Set<String> metricNames(String promql) {
    String s =
        promql
            .replaceAll("\"(?:[^\"\\\\]|\\\\.)*\"", " ")
            .replaceAll("\\{[^}]*}", " ")
            .replaceAll("\\[[^]]*]", " ")
            .replaceAll("\\b(by|without|on|ignoring|group_left|group_right)\\s*\\([^)]*\\)", " ")
            .replaceAll("\\$\\{[^}]*}|\\$\\w+", " ");
    Set<String> names = new TreeSet<>();
    Matcher m = IDENTIFIER.matcher(s);
    while (m.find()) {
      String rest = s.substring(m.end()).stripLeading();
      boolean function = rest.startsWith("(");
      boolean number = m.start() > 0 && Character.isDigit(s.charAt(m.start() - 1));
      if (!function && !number && !KEYWORDS.contains(m.group())) {
        names.add(m.group());
      }
    }
    return names;
  }

  private static Set<String> exportedNames(String scrape) {
    Set<String> names = new TreeSet<>();
    for (String line : scrape.split("\n")) {
      Matcher m = IDENTIFIER.matcher(line);
      if (!line.startsWith("#") && m.lookingAt()) {
        names.add(m.group());
      }
    }
    return names;
  }

  private static String scrape(String url) throws Exception {
    return HttpClient.newHttpClient()
        .send(HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString())
        .body();
  }
}
