package ca.helu.pallas.operator.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.operator.testing.KubeCluster;
import ca.helu.pallas.operator.testing.NodeCluster;
import ca.helu.pallas.operator.testing.ToolImages;
import ca.helu.pallas.runtime.testing.FakeLlmServer;
import ca.helu.pallas.runtime.testing.JaegerServer;
import ca.helu.pallas.runtime.testing.KeycloakServer;
import ca.helu.pallas.runtime.testing.McpClients;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The product as a user runs it, on a real node (e2e/cluster/README.md): the chart installed as
 * README says, then examples/team.yaml (an agent calling two agents, one of them using an MCP
 * server that runs as its own pod, the other on an OpenAI-compatible provider whose key is in a
 * Secret), Daedalus as a Job in the cluster talking to every agent through the registry Service,
 * and Prometheus, configured by the Prometheus Operator from the chart's and the operator's
 * ServiceMonitors and PrometheusRule, scraping every pod; then Jaeger as a pod, receiving the
 * team's traces. Then (tests 20-29) examples/secured.yaml with Keycloak on the host as its issuer,
 * and Daedalus calling it with a user's token, its agents in pods of their own and then in one pod
 * group. The images that cannot be pulled here (Daedalus, the MCP server, the Prometheus stack,
 * Jaeger) are built by e2e/cluster/tool-images.py. The tests run in order on one cluster.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ClusterFleetIT {
  private static final Duration LONG = Duration.ofMinutes(6);
  private static final HttpClient HTTP = HttpClient.newHttpClient();
  private static final ObjectMapper JSON = new ObjectMapper();
  private static Path dir;
  private static NodeCluster cluster;
  private static FakeLlmServer llm;
  private static Map<String, ToolImages.Image> images;
  // the issuer of examples/secured.yaml, on the node's bridge address (tests 20-29)
  private static KeycloakServer keycloak;

  @BeforeAll
  static void up() throws Exception {
    dir = Files.createTempDirectory("pallas-cluster");
    cluster = NodeCluster.up(dir);
    images = ToolImages.build(cluster, dir.resolve("images"));
    cluster.load(ToolImages.tarballs(images));
    cluster.installFromReadme(); // the operator ready before anything is applied
    llm = FakeLlmServer.openAiOn(NodeCluster.NODE_IP, "gpt-4o-mini");
  }

  @AfterAll
  static void down() throws Exception {
    if (llm != null) {
      llm.close();
    }
    if (keycloak != null) {
      keycloak.close();
    }
    if (cluster != null) {
      cluster.down().ok();
    }
  }

  /**
   * examples/team.yaml as its header says to apply it, in a namespace enforcing Pod Security
   * "restricted": Ready with three agents; the tools agent reaches the MCP server's pod, the writer
   * the provider with the Secret's key.
   */
  @Test
  @Order(1)
  void theTeamExampleRunsWithAnMcpServerPodAndAProviderKeyFromASecret() throws Exception {
    cluster.restrictedNamespace("team");
    long start = System.nanoTime();
    cluster.kubectl("apply", "--namespace", "team", "-f", "examples/cluster/");
    // the example's endpoint is the fake LLM server on the node's address; only its port differs
    cluster.kubectl(
        "patch",
        "endpointslice",
        "llm-1",
        "--namespace",
        "team",
        "--type=json",
        "-p=[{\"op\":\"replace\",\"path\":\"/ports/0/port\",\"value\":"
            + URI.create(llm.baseUrl()).getPort()
            + "}]");
    cluster.kubectl(
        "create",
        "secret",
        "generic",
        "llm",
        "--namespace",
        "team",
        "--from-literal=api-key=team-key");
    cluster.kubectl("apply", "--namespace", "team", "-f", "examples/team.yaml");
    cluster.kubectl(
        "wait", "--namespace", "team", "pallas/team", "--for=condition=Ready", "--timeout=300s");
    System.out.printf("team example: kubectl apply to Ready=True %.1f s%n", seconds(start));
    assertThat(cluster.kubectl("get", "pallas", "--namespace", "team"))
        .containsPattern("team\\s+True\\s+3/3");

    try (McpSyncClient tools = McpClients.connect(serviceUrl("team-tools", 24302))) {
      McpSchema.CallToolResult result =
          McpClients.send(
              tools, "send_message", "***CALL_TOOL everything__echo {\"message\": \"hi there\"}");
      assertThat(result.isError()).as(McpClients.text(result)).isNotEqualTo(Boolean.TRUE);
      assertThat(McpClients.text(result)).contains("hi there");
    }
    try (McpSyncClient writer = McpClients.connect(serviceUrl("team-writer", 24301))) {
      McpSchema.CallToolResult result = McpClients.send(writer, "send_message", "a haiku");
      assertThat(McpClients.text(result)).isEqualTo("default answer");
      assertThat(llm.chatRequests().getLast().header("Authorization")).isEqualTo("Bearer team-key");
    }
  }

  /** Daedalus's own client library, in a Job: the exit code and the log are the verdict. */
  @Test
  @Order(2)
  void daedalusAsAJobFindsAndTalksToEveryAgentThroughTheRegistryService() throws Exception {
    String log = daedalusJob("team", "e2e/cluster/daedalus-job.yaml");
    assertThat(log)
        .doesNotContain("FAIL")
        .contains("ok registry lists 3 agents")
        .contains("ok lead calls tools");
  }

  /**
   * The Prometheus Operator and a Prometheus it manages pick up the operator's ServiceMonitor for
   * the team and the chart's ServiceMonitor and PrometheusRule: every pod is up, the Daedalus Job's
   * calls are counted, every rule is loaded and evaluates.
   */
  @Test
  @Order(3)
  void prometheusConfiguredByThePrometheusOperatorScrapesEveryPod() throws Exception {
    String crds = KubeCluster.SERVICE_MONITOR_CRD.getParent().toString();
    cluster.kubectl("apply", "--server-side", "-f", crds);
    // a kind is served only once its CRD is established: applying a Prometheus before that fails
    // with "no matches for kind" (seen in CI)
    cluster.kubectl("wait", "--for", "condition=Established", "--timeout=120s", "-f", crds);
    String monitoring =
        Files.readString(NodeCluster.ROOT.resolve("e2e/cluster/monitoring.yaml"))
            .replace("PROMETHEUS_OPERATOR_IMAGE", images.get("prometheus-operator").tag())
            .replace(
                "PROMETHEUS_CONFIG_RELOADER_IMAGE", images.get("prometheus-config-reloader").tag())
            .replace("PROMETHEUS_IMAGE", images.get("prometheus").tag())
            .replace("PROMETHEUS_VERSION", images.get("prometheus").version());
    long start = System.nanoTime();
    Path manifest = dir.resolve("monitoring.yaml");
    Files.writeString(manifest, monitoring);
    cluster.kubectl("apply", "-f", manifest.toString());
    cluster
        .sh(
            "helm upgrade pallas helm/pallas-operator --namespace pallas-system --reuse-values"
                + " --set prometheusRule.enabled=true,metrics.serviceMonitor.enabled=true",
            LONG)
        .ok();

    String prometheusIp =
        awaitKubectl(
            ip -> !ip.isBlank(),
            "get",
            "pods",
            "--namespace",
            "monitoring",
            "-l",
            "app.kubernetes.io/name=prometheus",
            "-o",
            "jsonpath={.items[?(@.status.phase==\"Running\")].status.podIP}");
    String prometheus = "http://" + prometheusIp + ":9090";

    // the three agents and the registry of the team, and the operator itself
    await()
        .atMost(LONG)
        .pollInterval(Duration.ofSeconds(2))
        .untilAsserted(() -> {
          Map<String, String> up = new TreeMap<>();
          for (JsonNode series : query(prometheus, "up")) {
            JsonNode labels = series.get("metric");
            up.put(
                labels.path("namespace").asText()
                    + "/"
                    + labels.path("app_kubernetes_io_component").asText(""),
                series.get("value").get(1).asText());
          }
          assertThat(up)
              .containsEntry("team/agent", "1")
              .containsEntry("team/registry", "1")
              .containsEntry("pallas-system/", "1");
          assertThat(query(prometheus, "count(up{namespace=\"team\"} == 1)"))
              .singleElement()
              .satisfies(count -> assertThat(count.get("value").get(1).asText()).isEqualTo("4"));
        });
    System.out.printf(
        "Prometheus Operator: monitoring applied to every target up %.1f s%n", seconds(start));
    // the Daedalus Job's calls, counted per agent
    await()
        .atMost(Duration.ofMinutes(2))
        .pollInterval(Duration.ofSeconds(2))
        .untilAsserted(() -> {
          Map<String, Double> calls = new TreeMap<>();
          for (JsonNode series :
              query(
                  prometheus,
                  "sum by (agent) (pallas_send_message_total{namespace=\"team\",outcome=\"ok\"})")) {
            calls.put(
                series.get("metric").get("agent").asText(), series.get("value").get(1).asDouble());
          }
          assertThat(calls).containsKeys("lead", "tools", "writer");
          assertThat(calls.get("lead")).isGreaterThanOrEqualTo(2);
        });
    // the chart's rules loaded, each evaluated without error
    await()
        .atMost(Duration.ofMinutes(2))
        .pollInterval(Duration.ofSeconds(2))
        .untilAsserted(() -> {
          JsonNode groups = get(prometheus + "/api/v1/rules").get("data").get("groups");
          List<String> rules = new ArrayList<>();
          for (JsonNode group : groups) {
            for (JsonNode rule : group.get("rules")) {
              assertThat(rule.get("health").asText())
                  .as(rule.get("name") + ": " + rule.path("lastError").asText())
                  .isEqualTo("ok");
              rules.add(rule.get("name").asText());
            }
          }
          assertThat(rules).containsExactlyInAnyOrderElementsOf(chartAlerts());
        });
  }

  /**
   * An agent pod's start to ready, with the image's AOT cache and without it (`-XX:AOTMode=off`),
   * from the pod the operator renders for the tools agent (as a bare Pod with no labels, so its
   * Service does not send it calls): the runtime prints how long after the JVM started it was
   * ready. Interleaved, five of each; the medians go to docs/benchmarks.md.
   */
  @Test
  @Order(4)
  void anAgentPodIsReadySoonerWithTheAotCache() throws Exception {
    JsonNode template =
        JSON.readTree(
                cluster.kubectl(
                    "get", "deployment", "team-tools", "--namespace", "team", "-o", "json"))
            .get("spec")
            .get("template");
    Map<Boolean, List<Long>> readyMillis = new TreeMap<>();
    for (int i = 0; i < 5; i++) {
      for (boolean aot : new boolean[] {true, false}) {
        readyMillis
            .computeIfAbsent(aot, a -> new ArrayList<>())
            .add(startToReady(template, aot, i));
      }
    }
    long withCache = median(readyMillis.get(true));
    long without = median(readyMillis.get(false));
    System.out.printf(
        "agent pod start to ready: %d ms with the AOT cache, %d ms without (medians of 5: %s)%n",
        withCache, without, readyMillis);
    assertThat(withCache).isLessThan(without);
  }

  /**
   * Traces on the cluster (docs/observability.md, "Traces"): Jaeger v2 as a pod
   * (e2e/cluster/jaeger.yaml), the team's {@code spec.tracing} naming its Service; the Daedalus
   * Job's call of lead, which asks the tools agent in its own pod, is one trace in Jaeger's query
   * API: lead's spans and the tools agent's under one trace id, each agent's call the child of the
   * span that called it.
   */
  @Test
  @Order(5)
  void theDaedalusJobsCallThroughTwoAgentPodsIsOneTraceInAJaegerPod() throws Exception {
    Path jaegerManifest = dir.resolve("jaeger.yaml");
    Files.writeString(
        jaegerManifest,
        Files.readString(NodeCluster.ROOT.resolve("e2e/cluster/jaeger.yaml"))
            .replace("JAEGER_IMAGE", images.get("pallas-jaeger").tag()));
    cluster.kubectl("apply", "-f", jaegerManifest.toString());
    cluster.kubectl(
        "rollout", "status", "deployment/jaeger", "--namespace", "tracing", "--timeout=300s");
    String jaeger =
        "http://"
            + awaitKubectl(
                ip -> !ip.isBlank(),
                "get",
                "pods",
                "--namespace",
                "tracing",
                "-l",
                "app.kubernetes.io/name=jaeger",
                "-o",
                "jsonpath={.items[?(@.status.phase==\"Running\")].status.podIP}")
            + ":16686";

    long start = System.nanoTime();
    cluster.kubectl(
        "patch",
        "pallas",
        "team",
        "--namespace",
        "team",
        "--type=merge",
        "-p={\"spec\":{\"tracing\":{\"endpoint\":\"http://jaeger.tracing.svc:4318\"}}}");
    // the operator has seen the change, then every agent rolled with it
    awaitKubectl(
        gens -> gens.split("/").length == 2 && gens.split("/")[0].equals(gens.split("/")[1]),
        "get",
        "pallas",
        "team",
        "--namespace",
        "team",
        "-o",
        "jsonpath={.metadata.generation}/{.status.observedGeneration}");
    for (String agent : List.of("writer", "tools", "lead")) {
      cluster.kubectl(
          "rollout", "status", "deployment/team-" + agent, "--namespace", "team", "--timeout=300s");
    }
    cluster.kubectl(
        "wait", "--namespace", "team", "pallas/team", "--for=condition=Ready", "--timeout=300s");
    System.out.printf(
        "tracing: spec.tracing patched to every agent rolled %.1f s%n", seconds(start));

    Path job = dir.resolve("daedalus-traced.yaml");
    Files.writeString(
        job,
        Files.readString(NodeCluster.ROOT.resolve("e2e/cluster/daedalus-job.yaml"))
            .replace("  name: daedalus\nspec:", "  name: daedalus-traced\nspec:"));
    cluster.kubectl("apply", "--namespace", "team", "-f", job.toString());
    String outcome =
        awaitKubectl(
            s -> !s.equals("/"),
            "get",
            "job",
            "daedalus-traced",
            "--namespace",
            "team",
            "-o",
            "jsonpath={.status.succeeded}/{.status.failed}");
    String log = cluster.kubectl("logs", "--namespace", "team", "job/daedalus-traced");
    assertThat(outcome).as(log).isEqualTo("1/");
    assertThat(log).contains("ok lead calls tools");

    // lead's call of tools: lead's server span, its turn, its client span to tools, then tools'
    // server span and turn in tools' pod, all of one trace
    List<JaegerServer.Span> trace =
        await()
            .atMost(Duration.ofMinutes(2))
            .pollInterval(Duration.ofSeconds(2))
            .ignoreExceptions() // Jaeger may answer before it knows the service
            .until(
                () ->
                    leadCallingTools(
                        JaegerServer.spans(
                            get(jaeger
                                    + "/api/traces?service=pallas&limit=100&operation="
                                    + URLEncoder.encode(
                                        "invoke_agent tools", StandardCharsets.UTF_8))
                                .toString())),
                Optional::isPresent)
            .orElseThrow();
    Map<String, JaegerServer.Span> byId =
        trace.stream().collect(Collectors.toMap(JaegerServer.Span::spanId, Function.identity()));
    JaegerServer.Span toolsTurn = only(trace, "invoke_agent tools");
    JaegerServer.Span toolsCall = byId.get(toolsTurn.parentId().orElseThrow());
    JaegerServer.Span leadToTools = byId.get(toolsCall.parentId().orElseThrow());
    JaegerServer.Span leadTurn = byId.get(leadToTools.parentId().orElseThrow());
    JaegerServer.Span leadCall = byId.get(leadTurn.parentId().orElseThrow());
    assertThat(toolsCall.name()).isEqualTo("tools/call tools");
    assertThat(toolsCall.tag("span.kind")).isEqualTo("server");
    assertThat(leadToTools.name()).isEqualTo("tools/call tools");
    assertThat(leadToTools.tag("span.kind")).isEqualTo("client");
    assertThat(leadToTools.tag("pallas.peer.agent")).isEqualTo("tools");
    // the called agent by its Service (PallasNames.peerUrl)
    assertThat(leadToTools.tag("server.address")).isEqualTo("team-tools.team.svc");
    assertThat(leadTurn.name()).isEqualTo("invoke_agent lead");
    assertThat(leadCall.name()).isEqualTo("tools/call lead");
    assertThat(leadCall.parentId())
        .as("the trace's root: Daedalus sent no trace context")
        .isEmpty();
    assertThat(trace.stream().map(JaegerServer.Span::name)).contains("chat passthrough");
    System.out.printf(
        "tracing: lead -> tools found as one trace of %d spans, %s%n",
        trace.size(), trace.getFirst().traceId());
  }

  /** The spans of the trace in which lead called tools (by the tool named after it), if any. */
  private static Optional<List<JaegerServer.Span>> leadCallingTools(List<JaegerServer.Span> spans) {
    Map<String, List<JaegerServer.Span>> traces =
        spans.stream().collect(Collectors.groupingBy(JaegerServer.Span::traceId));
    return traces.values().stream()
        .filter(t -> t.stream().anyMatch(s -> s.name().equals("invoke_agent lead")))
        .filter(t -> t.stream().anyMatch(s -> s.name().equals("invoke_agent tools")))
        .findFirst();
  }

  private static JaegerServer.Span only(List<JaegerServer.Span> spans, String name) {
    List<JaegerServer.Span> named = spans.stream().filter(s -> s.name().equals(name)).toList();
    assertThat(named).as(name).hasSize(1);
    return named.getFirst();
  }

  private static long startToReady(JsonNode template, boolean aot, int run) throws Exception {
    String name = "start-" + (aot ? "aot" : "jit") + "-" + run;
    ObjectNode pod = JSON.createObjectNode();
    pod.put("apiVersion", "v1").put("kind", "Pod");
    pod.putObject("metadata").put("name", name).put("namespace", "team");
    ObjectNode spec = template.get("spec").deepCopy();
    spec.put("restartPolicy", "Never");
    ObjectNode container = (ObjectNode) spec.get("containers").get(0);
    if (!aot) {
      ArrayNode env =
          container.has("env") ? (ArrayNode) container.get("env") : container.putArray("env");
      env.addObject().put("name", "JAVA_TOOL_OPTIONS").put("value", "-XX:AOTMode=off");
    }
    pod.set("spec", spec);
    Path file = dir.resolve(name + ".json");
    Files.writeString(file, pod.toString());
    cluster.kubectl("apply", "-f", file.toString());
    String line =
        await()
            .atMost(Duration.ofMinutes(2))
            .pollInterval(Duration.ofMillis(500))
            .until(
                () ->
                    cluster
                        .sh("kubectl logs --namespace team " + name + " 2>/dev/null", LONG)
                        .output()
                        .lines()
                        .filter(l -> l.startsWith("ready "))
                        .findFirst()
                        .orElse(""),
                l -> !l.isEmpty());
    cluster.kubectl("delete", "pod", name, "--namespace", "team", "--wait=false");
    return Long.parseLong(line.split(" ")[1]);
  }

  /**
   * examples/secured.yaml as its header says to apply it, its issuer a Keycloak on the host
   * listening on the node's bridge address, so that the pods and the host share one issuer URL: the
   * fleet is Ready and Verified although its agents let nobody in without a token (openHealth:
   * false), the operator presenting a token of its own ServiceAccount; a client without a token is
   * refused. Here rather than in RealClusterIT, which builds neither the Daedalus nor the MCP
   * server image this needs.
   */
  @Test
  @Order(20)
  void theSecuredExampleIsReadyAndVerifiedAndRefusesAClientWithoutAToken() throws Exception {
    keycloak = new KeycloakServer().on(NodeCluster.NODE_IP).start();
    cluster.restrictedNamespace("secured");
    long start = System.nanoTime();
    cluster.kubectl(
        "apply", "--namespace", "secured", "-f", "examples/cluster/mcp-everything.yaml");
    cluster.kubectl(
        "create",
        "secret",
        "generic",
        "pallas-agents",
        "--namespace",
        "secured",
        "--from-literal=client-secret=pallas-agents-secret");
    // the example with this Keycloak's realm as its issuer
    Path secured = dir.resolve("secured.yaml");
    Files.writeString(secured, securedExample());
    cluster.kubectl("apply", "--namespace", "secured", "-f", secured.toString());
    cluster.kubectl(
        "wait",
        "--namespace",
        "secured",
        "pallas/secured",
        "--for=condition=Ready",
        "--timeout=300s");
    System.out.printf("secured example: kubectl apply to Ready=True %.1f s%n", seconds(start));
    awaitKubectl(
        "True"::equals,
        "get",
        "pallas",
        "secured",
        "--namespace",
        "secured",
        "-o",
        "jsonpath={.status.conditions[?(@.type==\"Verified\")].status}");
    System.out.printf("secured example: kubectl apply to Verified=True %.1f s%n", seconds(start));
    assertThat(
            cluster.kubectl(
                "get",
                "pallas",
                "secured",
                "--namespace",
                "secured",
                "-o",
                "jsonpath={.status.agents[*].tools}"))
        .contains("send_message");

    HttpResponse<String> refused =
        HTTP.send(
            HttpRequest.newBuilder(URI.create(serviceUrl("secured", "secured-lead", 24402)))
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream")
                .POST(
                    HttpRequest.BodyPublishers.ofString(
                        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                            + "\"params\":{\"name\":\"get_health\",\"arguments\":{}}}"))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(refused.statusCode()).isEqualTo(401);
    assertThat(refused.headers().firstValue("WWW-Authenticate").orElse(""))
        .contains("resource_metadata=");

    // the registry pod follows the agents as itself (its ServiceAccount's projected tokens): with
    // nothing open, its index still holds the tools agent's server's tools
    String alice = keycloak.userToken("daedalus", "daedalus-secret", "alice", "alice-password");
    try (McpSyncClient registry =
        McpClients.connect(serviceUrl("secured", "secured-registry", 24400), alice, n -> {})) {
      McpSchema.CallToolResult found =
          registry.callTool(
              new McpSchema.CallToolRequest("find_tools", Map.of("query", "echo a message")));
      assertThat(JSON.valueToTree(found.structuredContent()).toString())
          .as(McpClients.text(found))
          .contains("everything/echo");
    }
  }

  /**
   * Daedalus's Job against the secured fleet, with alice's token from the host's Keycloak: it is
   * refused without the token and with it lists, checks and calls every agent, lead calls tools (as
   * itself, for alice), and tools calls the MCP server with a token Keycloak exchanged for alice's.
   */
  @Test
  @Order(21)
  void daedalusCallsTheSecuredFleetWithATokenAndIsRefusedWithout() throws Exception {
    String log = daedalusJob("secured", securedJob(2).toString());
    assertThat(log)
        .doesNotContain("FAIL")
        .contains("ok lead refuses a client without a token")
        .contains("ok tools is healthy")
        .contains("ok lead calls tools")
        .contains("ok tools calls everything__echo with a token exchanged for the caller's");
  }

  /**
   * The secured fleet re-applied with its agents in one pod group and a third agent, scout, that
   * also calls tools (issue 21 §4 with issue 18 §3): the agents' pods give way to the group's,
   * which runs as the group's ServiceAccount; lead and scout share that identity, so tools tells
   * them apart by the agent each request names, and Daedalus's call through lead to tools and on to
   * the MCP server with an exchanged token works as before.
   */
  @Test
  @Order(22)
  void theSecuredFleetInAPodGroupCallsAsTheGroupsIdentity() throws Exception {
    Path grouped = dir.resolve("secured-grouped.yaml");
    Files.writeString(
        grouped,
        securedExample()
                .replace(
                    "\nspec:\n", "\nspec:\n  podGroups: [{name: crew}]\n  defaultPodGroup: crew\n")
            + """
                - name: scout
                  description: Also calls the tools agent
                  servers: [tools]
            """);
    long start = System.nanoTime();
    cluster.kubectl("apply", "--namespace", "secured", "-f", grouped.toString());
    awaitKubectl(
        "secured-crew secured-registry"::equals,
        "get",
        "deployments",
        "--namespace",
        "secured",
        "-l",
        "app.kubernetes.io/instance=secured",
        "-o",
        "jsonpath={.items[*].metadata.name}");
    cluster.kubectl(
        "rollout", "status", "--namespace", "secured", "deployment/secured-crew", "--timeout=300s");
    awaitKubectl(
        "True True"::equals,
        "get",
        "pallas",
        "secured",
        "--namespace",
        "secured",
        "-o",
        "jsonpath={.status.conditions[?(@.type==\"Ready\")].status}"
            + " {.status.conditions[?(@.type==\"Verified\")].status}");
    System.out.printf(
        "secured example in a pod group: kubectl apply to Ready and Verified %.1f s%n",
        seconds(start));
    assertThat(
            cluster.kubectl(
                "get",
                "deployment",
                "secured-crew",
                "--namespace",
                "secured",
                "-o",
                "jsonpath={.spec.template.spec.serviceAccountName}"))
        .isEqualTo("secured-crew");
    assertThat(
            cluster.kubectl(
                "get",
                "serviceaccounts",
                "--namespace",
                "secured",
                "-l",
                "app.kubernetes.io/instance=secured",
                "-o",
                "jsonpath={.items[*].metadata.name}"))
        .as("the agents' own accounts gave way to the group's")
        .contains("secured-crew")
        .doesNotContain("secured-lead", "secured-tools");

    cluster.kubectl("delete", "job", "daedalus", "--namespace", "secured", "--wait=true");
    String log = daedalusJob("secured", securedJob(3).toString());
    assertThat(log)
        .doesNotContain("FAIL")
        .contains("ok lead calls tools")
        .contains("ok tools calls everything__echo with a token exchanged for the caller's");
    // tools's audit line of lead's call: alice's, through lead, which the group's token and the
    // agent it named proved
    assertThat(
            cluster.kubectl(
                "logs", "--namespace", "secured", "deployment/secured-crew", "--tail=-1"))
        .containsPattern("caller=\\S+ client=daedalus agent=tools tool=tools outcome=ok.*via=lead");
  }

  /** examples/secured.yaml with the host's Keycloak realm as its issuer. */
  private static String securedExample() throws IOException {
    return Files.readString(NodeCluster.ROOT.resolve("examples/secured.yaml"))
        .replace("https://keycloak.example/realms/pallas", keycloak.issuer());
  }

  /**
   * e2e/cluster/daedalus-job.yaml for the secured fleet of {@code agents} agents: with alice's
   * token from the host's Keycloak, through lead to tools and on to the MCP server.
   */
  private static Path securedJob(int agents) throws IOException {
    ObjectNode job =
        (ObjectNode)
            new YAMLMapper()
                .readTree(NodeCluster.ROOT.resolve("e2e/cluster/daedalus-job.yaml").toFile());
    ArrayNode env = (ArrayNode) job.at("/spec/template/spec/containers/0/env");
    env.removeAll();
    Map<String, String> vars = new java.util.LinkedHashMap<>();
    vars.put("REGISTRY_URL", "http://secured-registry.secured.svc:24400");
    vars.put("AGENTS", Integer.toString(agents));
    vars.put("CALL", "lead:tools");
    vars.put("TOKEN_URL", keycloak.issuer() + "/protocol/openid-connect/token");
    vars.put("CLIENT_ID", "daedalus");
    vars.put("CLIENT_SECRET", "daedalus-secret");
    vars.put("USERNAME", "alice");
    vars.put("PASSWORD", "alice-password");
    vars.put("EXCHANGE", "tools:everything__echo");
    vars.forEach((name, value) -> env.addObject().put("name", name).put("value", value));
    Path file = dir.resolve("daedalus-secured-" + agents + ".json");
    Files.writeString(file, job.toString());
    return file;
  }

  /**
   * Applies the Daedalus Job of {@code file} in {@code namespace} and waits for it to end; its log,
   * once it succeeded (the exit code and the log are the verdict).
   */
  private static String daedalusJob(String namespace, String file) throws Exception {
    long start = System.nanoTime();
    cluster.kubectl("apply", "--namespace", namespace, "-f", file);
    String outcome =
        awaitKubectl(
            s -> !s.equals("/"),
            "get",
            "job",
            "daedalus",
            "--namespace",
            namespace,
            "-o",
            "jsonpath={.status.succeeded}/{.status.failed}");
    System.out.printf(
        "Daedalus Job in %s: kubectl apply to finished %.1f s%n", namespace, seconds(start));
    String log = cluster.kubectl("logs", "--namespace", namespace, "job/daedalus");
    System.out.print(log);
    assertThat(outcome).as(log).isEqualTo("1/");
    return log;
  }

  /**
   * What kubectl with these arguments prints, once {@code done} accepts it (polled each second).
   */
  private static String awaitKubectl(Predicate<String> done, String... args) {
    return await()
        .atMost(LONG)
        .pollInterval(Duration.ofSeconds(1))
        .until(() -> cluster.kubectl(args), done);
  }

  private static long median(List<Long> values) {
    return values.stream().sorted().toList().get(values.size() / 2);
  }

  /** The alerts of the chart's rules file. */
  private static List<String> chartAlerts() throws Exception {
    JsonNode rules =
        new YAMLMapper()
            .readTree(
                NodeCluster.ROOT
                    .resolve("helm/pallas-operator/files/prometheus-rules.yaml")
                    .toFile());
    return rules.findValuesAsText("alert");
  }

  private static List<JsonNode> query(String prometheus, String promql) throws Exception {
    JsonNode body =
        get(
            prometheus
                + "/api/v1/query?query="
                + URLEncoder.encode(promql, StandardCharsets.UTF_8));
    assertThat(body.get("status").asText()).as(body.toString()).isEqualTo("success");
    List<JsonNode> result = new ArrayList<>();
    body.get("data").get("result").forEach(result::add);
    return result;
  }

  private static JsonNode get(String url) throws Exception {
    HttpResponse<String> response =
        HTTP.send(
            HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10)).build(),
            HttpResponse.BodyHandlers.ofString());
    return JSON.readTree(response.body());
  }

  /** An MCP endpoint through its Service's address on the cluster's bridge. */
  private static String serviceUrl(String service, int port) throws Exception {
    return serviceUrl("team", service, port);
  }

  private static String serviceUrl(String namespace, String service, int port) throws Exception {
    return "http://"
        + cluster.kubectl(
            "get", "service", service, "--namespace", namespace, "-o", "jsonpath={.spec.clusterIP}")
        + ":"
        + port
        + "/mcp";
  }

  private static double seconds(long start) {
    return (System.nanoTime() - start) / 1e9;
  }
}
