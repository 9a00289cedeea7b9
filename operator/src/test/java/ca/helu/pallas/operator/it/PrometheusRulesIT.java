package ca.helu.pallas.operator.it;

import static org.assertj.core.api.Assertions.assertThat;

import ca.helu.pallas.operator.testing.GoBinaries;
import ca.helu.pallas.operator.testing.Helm;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The chart's alerts and dashboard through Prometheus' own parser (promtool, built from the Go
 * module proxy by tools/go-binaries.sh): the PrometheusRule as rendered passes {@code promtool
 * check rules}, every alert fires on synthetic series and stays silent on healthy ones ({@code
 * promtool test rules} with src/test/resources/prometheus/alerts-test.yaml), and every dashboard
 * query parses. That the metrics they name exist is MonitoringAssetsIT's part (agent-runtime).
 */
class PrometheusRulesIT {
  private static final YAMLMapper YAML = new YAMLMapper();

  @Test
  void theAlertsParseAndFireOnSyntheticSeries(@TempDir Path dir) throws Exception {
    JsonNode rule =
        Helm.template("--set", "prometheusRule.enabled=true")
            .get("PrometheusRule", "pallas-pallas-operator");
    Files.writeString(dir.resolve("rules.yaml"), YAML.writeValueAsString(rule.get("spec")));
    try (InputStream in = getClass().getResourceAsStream("/prometheus/alerts-test.yaml")) {
      Files.write(dir.resolve("alerts-test.yaml"), in.readAllBytes());
    }

    String check = promtool(dir, 0, "check", "rules", "rules.yaml");
    assertThat(check).contains("SUCCESS: 9 rules found");
    String test = promtool(dir, 0, "test", "rules", "alerts-test.yaml");
    assertThat(test).contains("SUCCESS");
  }

  @Test
  void aBrokenRuleIsRefused(@TempDir Path dir) throws Exception {
    Files.writeString(
        dir.resolve("rules.yaml"),
        "groups: [{name: g, rules: [{alert: A, expr: 'sum by (agent (up)'}]}]\n");
    assertThat(promtool(dir, 1, "check", "rules", "rules.yaml")).contains("parse error");
  }

  @Test
  void everyDashboardQueryParses(@TempDir Path dir) throws Exception {
    JsonNode dashboard =
        new ObjectMapper()
            .readTree(
                Helm.template("--set", "dashboards.enabled=true")
                    .ofKind("ConfigMap")
                    .get(0)
                    .at("/data/pallas-agents.json")
                    .asText());
    // each query as a recording rule, with Grafana's variables replaced as Grafana would
    ObjectNode file = YAML.createObjectNode();
    ArrayNode rules =
        file.putArray("groups").addObject().put("name", "dashboard").putArray("rules");
    List<String> queries = new ArrayList<>();
    for (JsonNode panel : dashboard.get("panels")) {
      for (JsonNode target : panel.path("targets")) {
        String expr =
            target
                .get("expr")
                .asText()
                .replace("$__rate_interval", "1m")
                .replace("$namespace", ".*")
                .replace("$instance", ".*");
        queries.add(expr);
        rules.addObject().put("record", "dashboard:query_" + queries.size()).put("expr", expr);
      }
    }
    assertThat(queries).hasSizeGreaterThanOrEqualTo(11);
    Files.writeString(dir.resolve("dashboard.yaml"), YAML.writeValueAsString(file));
    assertThat(promtool(dir, 0, "check", "rules", "dashboard.yaml"))
        .contains("SUCCESS: " + queries.size() + " rules found");
  }

  private static String promtool(Path dir, int expectedExit, String... args) throws Exception {
    List<String> command = new ArrayList<>(List.of(GoBinaries.path("promtool").toString()));
    command.addAll(List.of(args));
    Process p =
        new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor())
        .as("promtool %s:%n%s", String.join(" ", args), out)
        .isEqualTo(expectedExit);
    return out;
  }
}
