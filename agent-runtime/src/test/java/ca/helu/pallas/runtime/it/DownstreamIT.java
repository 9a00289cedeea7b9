package ca.helu.pallas.runtime.it;

import static ca.helu.pallas.runtime.testing.McpClients.send;
import static ca.helu.pallas.runtime.testing.McpClients.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.runtime.testing.McpClients;
import ca.helu.pallas.runtime.testing.RawMcp;
import ca.helu.pallas.runtime.testing.RunningFleet;
import ca.helu.pallas.runtime.testing.ServerEverything;
import ca.helu.pallas.runtime.testing.TestMcpServer;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Agents calling real downstream MCP servers: bearer isolation, failures, health, reconnects. */
class DownstreamIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static TestMcpServer tools;
  private static TestMcpServer open;
  private static TestMcpServer explicit;
  private static TestMcpServer hang;
  private static TestMcpServer garbage;
  private static int dead;
  private static int late;
  private static RunningFleet fleet;

  @BeforeAll
  static void start() {
    tools = TestMcpServer.start();
    open = TestMcpServer.start();
    explicit = TestMcpServer.start();
    hang = TestMcpServer.start(TestMcpServer.Mode.HANG);
    garbage = TestMcpServer.start(TestMcpServer.Mode.GARBAGE);
    dead = RunningFleet.unboundPort();
    late = RunningFleet.unboundPort();
    fleet =
        RunningFleet.start(
            """
            apiVersion: pallas.helu.ca/v1alpha1
            kind: PallasDeployment
            metadata: {name: downstream}
            spec:
              registry: {port: ${port:registry}}
              defaultModel: passthrough
              mcpServers:
                - {name: tools, url: "%s", forwardInboundAuth: true, timeoutSeconds: 5}
                - {name: open, url: "%s"}
                - name: explicit
                  url: "%s"
                  forwardInboundAuth: true
                  headers: [{name: Authorization, valueFrom: {env: EXPLICIT_TOKEN}}]
                - {name: hang, url: "%s", timeoutSeconds: 1}
                - {name: garbage, url: "%s"}
                - {name: dead, url: "http://127.0.0.1:%d/mcp"}
                - {name: late, url: "http://127.0.0.1:%d/mcp"}
              agents:
                - name: worker
                  port: ${port:worker}
                  servers: [tools, open, explicit]
                  instanceScope: request
                - name: fragile
                  port: ${port:fragile}
                  servers: [tools, hang, garbage, dead]
                  instanceScope: request
                - name: patient
                  port: ${port:patient}
                  servers: [late]
                  instanceScope: request
            """
                .formatted(
                    tools.url(), open.url(), explicit.url(), hang.url(), garbage.url(), dead, late),
            // the secret header's value comes from the environment, as in a pod
            Map.of("EXPLICIT_TOKEN", "Bearer configured"));
  }

  @AfterAll
  static void stop() {
    fleet.close();
    for (TestMcpServer s : List.of(tools, open, explicit, hang, garbage)) {
      s.close();
    }
  }

  @Test
  void bearerRidesOnlyToOptedInServersAndExplicitHeadersWin() {
    try (McpSyncClient c = McpClients.connect(fleet.mcpUrl("worker"), "alpha", n -> {})) {
      assertThat(text(send(c, "send_message", "***CALL_TOOL tools__whoami")))
          .isEqualTo("Bearer alpha");
      assertThat(text(send(c, "send_message", "***CALL_TOOL open__whoami"))).isEqualTo("none");
      assertThat(text(send(c, "send_message", "***CALL_TOOL explicit__whoami")))
          .isEqualTo("Bearer configured");
    }
    try (McpSyncClient c = McpClients.connect(fleet.mcpUrl("worker"))) {
      assertThat(text(send(c, "send_message", "***CALL_TOOL tools__whoami")))
          .as("a caller without a bearer forwards none")
          .isEqualTo("none");
    }
  }

  @Test
  void concurrentCallsNeverSeeEachOthersBearer() throws Exception {
    int calls = 300;
    try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
      List<Future<String[]>> results = new ArrayList<>();
      for (int i = 0; i < calls; i++) {
        String bearer = "token-" + i + "-" + Integer.toHexString(i * 7919);
        String server = i % 2 == 0 ? "tools" : "open";
        results.add(
            pool.submit(() -> {
              RawMcp mcp = RawMcp.open(fleet.mcpUrl("worker"), bearer);
              JsonNode r =
                  mcp.callTool(
                      "send_message", Map.of("message", "***CALL_TOOL " + server + "__whoami"));
              return new String[] {bearer, server, RawMcp.text(r)};
            }));
      }
      for (Future<String[]> f : results) {
        String[] r = f.get();
        assertThat(r[2])
            .as("server %s for caller %s", r[1], r[0])
            .isEqualTo(r[1].equals("tools") ? "Bearer " + r[0] : "none");
      }
    }
    assertThat(open.authorizations()).isNotEmpty().allMatch("none"::equals);
  }

  @Test
  void aFailingToolIsAFailedResultTheModelSeesAndTheTurnGoesOn() throws Exception {
    List<McpSchema.ProgressNotification> seen = McpClients.newProgressLog();
    try (McpSyncClient c = McpClients.connect(fleet.mcpUrl("fragile"), null, seen::add)) {
      McpSchema.CallToolResult slow =
          c.callTool(
              McpSchema.CallToolRequest.builder("send_message")
                  .arguments(Map.of("message", "***CALL_TOOL tools__sleep {\"ms\": 8000}"))
                  .progressToken("slow")
                  .build());
      assertThat(slow.isError()).as("the turn itself completes").isFalse();
      assertThat(text(slow)).isEqualTo("Error: tools/sleep failed: timed out after 5s");
      assertThat(McpClients.progressOf(seen, "slow"))
          .extracting(McpSchema.ProgressNotification::message)
          .contains("tools/sleep: started", "tools/sleep: failed");

      assertThat(text(send(c, "send_message", "***CALL_TOOL tools__fail")))
          .isEqualTo("Error: tools/fail failed: the fail tool always fails");
      assertThat(
              text(send(c, "send_message", "***CALL_TOOL tools__echo {\"text\": \"still fine\"}")))
          .isEqualTo("still fine");
      assertThat(text(send(c, "send_message", "***CALL_TOOL hang__anything")))
          .as("a server that cannot list its tools offers none this turn")
          .isEqualTo("Error: unknown tool 'hang__anything'");
    }
    String metrics = get(fleet.registryBase() + "/metrics");
    assertThat(metrics)
        .contains(
            "pallas_tool_calls_total{agent=\"fragile\",operation=\"tool\",outcome=\"error\",server=\"tools\"} 2.0")
        .contains(
            "pallas_tool_calls_total{agent=\"fragile\",operation=\"tool\",outcome=\"ok\",server=\"tools\"} 1.0");
  }

  @Test
  void healthIsDegradedNamingTheBrokenServersAndNeverWaitsForAHungOne() throws Exception {
    try (McpSyncClient c = McpClients.connect(fleet.mcpUrl("fragile"))) {
      JsonNode health = null;
      long deadline = System.nanoTime() + 15_000_000_000L;
      long slowest = 0;
      while (System.nanoTime() < deadline) {
        long start = System.nanoTime();
        health =
            JSON.readTree(text(c.callTool(new McpSchema.CallToolRequest("get_health", Map.of()))));
        slowest = Math.max(slowest, System.nanoTime() - start);
        if (health.path("message").asText().contains("hang")) {
          break;
        }
        Thread.sleep(200);
      }
      assertThat(health.get("status").asText()).isEqualTo("degraded");
      assertThat(health.get("message").asText()).isEqualTo("Unreachable: hang, garbage, dead");
      assertThat(slowest / 1_000_000)
          .as("get_health answers from background probes, even while 'hang' hangs for 3 s")
          .isLessThan(1000);
    }
    String metrics = get(fleet.registryBase() + "/metrics");
    assertThat(metrics)
        .contains("pallas_downstream_up{agent=\"fragile\",server=\"dead\"} 0.0")
        .contains("pallas_downstream_up{agent=\"fragile\",server=\"tools\"} 1.0")
        .contains("pallas_agent_health_status{agent=\"fragile\"} 0.5");
    assertThat(tools.deletes()).as("probes tear their sessions down").isPositive();
  }

  @Test
  void aServerThatComesUpLaterIsUsedOnceItIsUp() throws Exception {
    try (McpSyncClient c = McpClients.connect(fleet.mcpUrl("patient"))) {
      assertThat(text(send(c, "send_message", "***CALL_TOOL late__echo {\"text\": \"hi\"}")))
          .isEqualTo("Error: unknown tool 'late__echo'");
      try (TestMcpServer server = TestMcpServer.start(TestMcpServer.Mode.MCP, late)) {
        assertThat(text(send(c, "send_message", "***CALL_TOOL late__echo {\"text\": \"hi\"}")))
            .isEqualTo("hi");
      }
    }
  }

  private final List<McpSchema.ProgressNotification> everythingProgress =
      McpClients.newProgressLog();

  @Test
  void worksWithTheReferenceServerEverythingFromNpm() throws Exception {
    try (ServerEverything everything = ServerEverything.start();
        RunningFleet withEverything =
            RunningFleet.start(
                """
                apiVersion: pallas.helu.ca/v1alpha1
                kind: PallasDeployment
                metadata: {name: everything}
                spec:
                  registry: {port: ${port:registry}}
                  defaultModel: passthrough
                  mcpServers: [{name: everything, url: "%s", timeoutSeconds: 10}]
                  agents: [{name: user, port: ${port:user}, servers: [everything]}]
                """
                    .formatted(everything.url()));
        McpSyncClient c =
            McpClients.connect(withEverything.mcpUrl("user"), null, everythingProgress::add)) {
      assertThat(
              text(
                  send(
                      c,
                      "send_message",
                      "***CALL_TOOL everything__echo {\"message\": \"from pallas\"}")))
          .contains("from pallas");
      // health comes from background probes: wait until they have seen the server
      await()
          .atMost(Duration.ofSeconds(10))
          .until(
              () ->
                  JSON.readTree(
                          text(c.callTool(new McpSchema.CallToolRequest("get_health", Map.of()))))
                      .path("status")
                      .asText(),
              "ok"::equals);

      // the server dies in the middle of a long call: the model gets a failed tool result
      var call =
          CompletableFuture.supplyAsync(
              () ->
                  text(
                      c.callTool(
                          McpSchema.CallToolRequest.builder()
                              .name("send_message")
                              .arguments(
                                  Map.of(
                                      "message",
                                      "***CALL_TOOL everything__trigger-long-running-operation"
                                          + " {\"duration\": 30, \"steps\": 3}"))
                              .progressToken("long")
                              .build())),
              // not the common pool: on 2 cores it has one thread, which the SDK client needs
              Executors.newVirtualThreadPerTaskExecutor());
      // kill the server only once the call has reached it: its progress says the tool started
      await()
          .atMost(Duration.ofSeconds(20))
          .until(() ->
              McpClients.progressOf(everythingProgress, "long").stream()
                  .anyMatch(n -> n.message() != null && n.message().contains("started")));
      everything.kill();
      assertThat(call.get(30, TimeUnit.SECONDS))
          .startsWith("Error: everything/trigger-long-running-operation failed: ");
    }
  }

  private static String get(String url) throws Exception {
    return HttpClient.newHttpClient()
        .send(HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString())
        .body();
  }
}
