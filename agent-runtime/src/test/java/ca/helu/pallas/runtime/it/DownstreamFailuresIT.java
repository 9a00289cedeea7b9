package ca.helu.pallas.runtime.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.runtime.downstream.Credentials;
import ca.helu.pallas.runtime.downstream.McpToolServer;
import ca.helu.pallas.runtime.loop.CallContext;
import ca.helu.pallas.runtime.loop.ToolResult;
import ca.helu.pallas.runtime.testing.ChaosProxy;
import ca.helu.pallas.runtime.testing.ChaosProxy.Break;
import ca.helu.pallas.runtime.testing.RawMcp;
import ca.helu.pallas.runtime.testing.RunningFleet;
import ca.helu.pallas.runtime.testing.TestMcpServer;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelcontextprotocol.spec.McpSchema;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * One caller's failure stays that caller's (issue 16; docs/runtime.md, "Downstream failures"): a
 * downstream server that answers one call with garbage, a reset, a dropped stream, a wrong answer,
 * an error status or nothing fails that call alone, while the calls in flight beside it on the same
 * session finish; calls to a server are bounded; get_health tells a failing server.
 *
 * <p>The server is a real SDK server ({@link TestMcpServer}) behind a {@link ChaosProxy} that
 * breaks the calls asked to break at the HTTP and socket level; the client is the runtime's own
 * {@link McpToolServer}, or a whole agent reached over MCP.
 */
class DownstreamFailuresIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final CallContext ANONYMOUS = CallContext.anonymous("test");
  private static TestMcpServer server;

  @BeforeAll
  static void start() {
    server = TestMcpServer.start();
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  private static McpToolServer client(ChaosProxy proxy, Duration timeout, int maxConcurrentCalls) {
    return new McpToolServer(
        "chaos",
        proxy.url(),
        Map.of(),
        Credentials.NONE,
        timeout,
        tool -> true,
        maxConcurrentCalls);
  }

  /** What the model is told about a call broken this way. */
  private static String expected(Break how) {
    return switch (how) {
      case GARBAGE_JSON, NOT_JSON_RPC, GARBAGE_SSE, GARBAGE_SSE_LATE ->
          "answered something that is not a valid MCP message";
      case FOREIGN_ID -> "answered with the result of another request on this call";
      case RESET, CLOSE -> "the connection failed (";
      case DROP, DROP_RESET -> "the connection dropped before the answer (";
      case END_EARLY -> "the server ended its answer without answering";
      case HANG -> "timed out after 3s";
      case STATUS_500 -> "answered HTTP 500";
      case STATUS_400, STATUS_404 -> throw new IllegalArgumentException(how + " is sent again");
    };
  }

  /** Healthy calls, kept in flight by {@code threads} callers until stopped. */
  private static final class Load implements AutoCloseable {
    final List<ToolResult> results = new CopyOnWriteArrayList<>();
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor();

    Load(McpToolServer target, int threads, int sleepMillis) {
      for (int i = 0; i < threads; i++) {
        pool.submit(() -> {
          while (running.get()) {
            results.add(target.call("sleep", Map.of("ms", sleepMillis), ANONYMOUS));
          }
        });
      }
    }

    @Override
    public void close() {
      running.set(false);
      pool.close();
    }
  }

  @ParameterizedTest
  @EnumSource(Break.class)
  void aBrokenCallFailsAloneWhileTheCallsInFlightBesideItFinish(Break how) throws Exception {
    try (ChaosProxy proxy = ChaosProxy.to(server.port());
        McpToolServer chaos = client(proxy, Duration.ofSeconds(3), 1000);
        ExecutorService callers = Executors.newVirtualThreadPerTaskExecutor()) {
      assertThat(chaos.tools()).as("one session, opened by the listing").isNotEmpty();
      proxy.holdBreaks();
      List<Future<ToolResult>> broken = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        Map<String, Object> arguments = Map.of("chaos", how.argument(), "text", "call " + i);
        broken.add(callers.submit(() -> chaos.call("echo", arguments, ANONYMOUS)));
      }
      await().until(() -> proxy.heldBreaks() == 4);
      List<ToolResult> healthy;
      int inFlightAtTheBreaks;
      try (Load load = new Load(chaos, 50, 300)) {
        await().until(() -> proxy.toolCallsInFlight() >= 40);
        long released = System.nanoTime();
        proxy.releaseBreaks();
        for (int i = 0; i < broken.size(); i++) {
          ToolResult result = broken.get(i).get(10, TimeUnit.SECONDS);
          if (how.sessionGone()) {
            // the server did not process it: sent again on the new session, and answered there
            assertThat(result.ok()).as(how + ": sent again: " + result.text()).isTrue();
            assertThat(result.text()).isEqualTo("call " + i);
          } else {
            assertThat(result.ok()).as(how + ": the broken call fails").isFalse();
            assertThat(result.text()).as(how + ": and says why").startsWith(expected(how));
          }
        }
        System.out.printf(
            "downstream failures: %s answered 4 calls within %d ms of the break, beside %d in"
                + " flight%n",
            how, (System.nanoTime() - released) / 1_000_000, proxy.toolCallsInFlight());
        inFlightAtTheBreaks = proxy.toolCallsInFlight();
        // and later calls work: a few more rounds of the load
        int before = load.results.size();
        await().until(() -> load.results.size() >= before + 100);
        healthy = load.results;
      }
      assertThat(inFlightAtTheBreaks)
          .as("healthy calls were in flight as the calls broke")
          .isPositive();
      assertThat(healthy)
          .as(how + ": every healthy call, in flight or later, succeeds")
          .allSatisfy(r -> {
            assertThat(r.ok()).as(r.text()).isTrue();
            assertThat(r.text()).isEqualTo("slept");
          });
      assertThat(proxy.initializes())
          .as("a call's failure keeps the session; a session gone is replaced once")
          .isEqualTo(how.sessionGone() ? 2 : 1);
    }
  }

  @Test
  void aServerThatLostTheSessionIsReconnectedOnceAndTheCallsItRefusedAreSentAgain()
      throws Exception {
    try (ChaosProxy proxy = ChaosProxy.to(server.port());
        McpToolServer chaos = client(proxy, Duration.ofSeconds(5), 1000)) {
      assertThat(chaos.tools()).isNotEmpty();
      List<ToolResult> results;
      try (Load load = new Load(chaos, 100, 200)) {
        await().until(() -> proxy.toolCallsInFlight() >= 80);
        proxy.forgetSessions();
        await().until(() -> proxy.initializes() == 2);
        int before = load.results.size();
        await().until(() -> load.results.size() >= before + 300);
        results = load.results;
      }
      assertThat(proxy.broken())
          .as("calls in flight were refused on the lost session")
          .isPositive();
      assertThat(results)
          .as("every call the server refused was sent again on the new session, and answered")
          .allSatisfy(r -> assertThat(r.ok()).as(r.text()).isTrue());
      assertThat(results).hasSizeGreaterThan(300);
      assertThat(proxy.initializes()).as("one new session, not one per refused call").isEqualTo(2);
    }
  }

  /**
   * A server restarted (a callee agent rolled): the call the new process refuses for our old
   * session is sent again on a new one, so the caller sees no failure; while the server is down,
   * its tools stay known to the model, and a call to one says the server is unreachable, not that
   * the tool is unknown (issue 17, §5).
   */
  @Test
  void aRestartedServerIsCalledAgainWithoutAFailureAndItsToolsStayKnownWhileItIsDown() {
    TestMcpServer first = TestMcpServer.start();
    int port = first.port();
    TestMcpServer restarted = null;
    try (McpToolServer client =
        new McpToolServer(
            "restarting",
            "http://127.0.0.1:" + port + "/mcp",
            Map.of(),
            Credentials.NONE,
            Duration.ofSeconds(3),
            tool -> true,
            10)) {
      List<String> listed = client.tools().stream().map(McpSchema.Tool::name).toList();
      assertThat(listed).contains("echo");
      first.close();
      restarted = TestMcpServer.start(TestMcpServer.Mode.MCP, port);

      ToolResult afterRestart = client.call("echo", Map.of("text", "after"), ANONYMOUS);
      assertThat(afterRestart.ok()).as(afterRestart.text()).isTrue();
      assertThat(afterRestart.text()).isEqualTo("after");

      restarted.close();
      restarted = null;
      // the new session's tools were never listed, and the server is gone
      assertThat(client.tools().stream().map(McpSchema.Tool::name).toList()).isEqualTo(listed);
      ToolResult whileDown = client.call("echo", Map.of("text", "down"), ANONYMOUS);
      assertThat(whileDown.ok()).isFalse();
      assertThat(whileDown.text()).startsWith("unreachable (connection refused)");

      restarted = TestMcpServer.start(TestMcpServer.Mode.MCP, port);
      ToolResult back = client.call("echo", Map.of("text", "back"), ANONYMOUS);
      assertThat(back.ok()).as(back.text()).isTrue();
      assertThat(back.text()).isEqualTo("back");
    } finally {
      if (restarted != null) {
        restarted.close();
      }
    }
  }

  @Test
  void aServerThatLosesEverySessionIsReconnectedWithBackoffNotOncePerCall() throws Exception {
    try (ChaosProxy proxy = ChaosProxy.to(server.port());
        McpToolServer chaos = client(proxy, Duration.ofSeconds(5), 1000)) {
      assertThat(chaos.tools()).isNotEmpty();
      proxy.forgetEverySession();
      List<ToolResult> results;
      try (Load load = new Load(chaos, 50, 10)) {
        await().until(() -> load.results.size() >= 1000);
        results = List.copyOf(load.results);
      }
      assertThat(results)
          .allSatisfy(r -> {
            assertThat(r.ok()).isFalse();
            // refused on the session, or already when opening it (its initialized notification)
            assertThat(r.text())
                .isIn(
                    "the server no longer knows our MCP session (HTTP 404); later calls use a new"
                        + " session",
                    "cannot connect: the server no longer knows our MCP session (HTTP 404); later"
                        + " calls use a new session",
                    "the server does not keep our MCP sessions");
          });
      System.out.printf(
          "downstream failures: a server losing every session: %d calls refused, %d initializes%n",
          results.size(), proxy.initializes());
      assertThat(proxy.initializes())
          .as("one opening at a time, backed off: not one per refused call of %s", results.size())
          .isBetween(2, 12);
    }
  }

  @Test
  void callsToAServerAreBoundedAndThoseOverTheBoundWaitForAPlace() throws Exception {
    try (ChaosProxy proxy = ChaosProxy.to(server.port());
        McpToolServer chaos = client(proxy, Duration.ofSeconds(10), 4);
        ExecutorService callers = Executors.newVirtualThreadPerTaskExecutor()) {
      List<Future<ToolResult>> calls = new ArrayList<>();
      for (int i = 0; i < 12; i++) {
        calls.add(callers.submit(() -> chaos.call("sleep", Map.of("ms", 500), ANONYMOUS)));
      }
      await()
          .until(() ->
              chaos.inFlight() == 4 && chaos.waiting() == 8 && proxy.toolCallsInFlight() == 4);
      for (Future<ToolResult> call : calls) {
        assertThat(call.get(10, TimeUnit.SECONDS)).isEqualTo(ToolResult.ok("slept"));
      }
      assertThat(proxy.maxToolCallsInFlight()).isEqualTo(4);
      assertThat(chaos.inFlight()).isZero();
    }
  }

  @Test
  void aCallWaitsForAPlaceAtMostItsTimeoutAndIsToldWhy() throws Exception {
    try (ChaosProxy proxy = ChaosProxy.to(server.port());
        McpToolServer chaos = client(proxy, Duration.ofSeconds(2), 1);
        ExecutorService callers = Executors.newVirtualThreadPerTaskExecutor()) {
      Map<String, Object> hang = Map.of("chaos", Break.HANG.argument());
      Future<ToolResult> first = callers.submit(() -> chaos.call("echo", hang, ANONYMOUS));
      await().until(() -> proxy.broken() == 1);
      Future<ToolResult> second = callers.submit(() -> chaos.call("echo", hang, ANONYMOUS));
      await().until(() -> chaos.waiting() == 1);
      Future<ToolResult> third =
          callers.submit(() -> chaos.call("echo", Map.of("text", "hi"), ANONYMOUS));
      await().until(() -> chaos.waiting() == 2);
      assertThat(first.get(10, TimeUnit.SECONDS).text()).isEqualTo("timed out after 2s");
      assertThat(third.get(10, TimeUnit.SECONDS).text())
          .as("the place went to the call waiting before it, for longer than its timeout")
          .isEqualTo(
              "no free place within 2s: calls to chaos in flight at once are limited to"
                  + " maxConcurrentCalls=1");
      assertThat(second.get(10, TimeUnit.SECONDS).text())
          .as("it waited for the first call, then ran")
          .isEqualTo("timed out after 2s");
      assertThat(chaos.call("echo", Map.of("text", "free again"), ANONYMOUS))
          .isEqualTo(ToolResult.ok("free again"));
    }
  }

  @Test
  void throughAnAgentFourResetsAmongThreeHundredParallelCallsFailOnlyThemselves() throws Exception {
    try (ChaosProxy proxy = ChaosProxy.to(server.port());
        RunningFleet fleet =
            RunningFleet.start(
                """
                apiVersion: pallas.helu.ca/v1alpha1
                kind: PallasDeployment
                metadata: {name: resets}
                spec:
                  registry: {port: ${port:registry}}
                  defaultModel: passthrough
                  mcpServers:
                    - {name: chaos, url: "%s", timeoutSeconds: 20, maxConcurrentCalls: 1000}
                  agents:
                    - {name: worker, port: ${port:worker}, servers: [chaos], instanceScope: request}
                """
                    .formatted(proxy.url()));
        ExecutorService callers = Executors.newVirtualThreadPerTaskExecutor()) {
      proxy.holdBreaks();
      List<Future<String>> resets = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        resets.add(
            callers.submit(() -> send(fleet, "***CALL_TOOL chaos__echo {\"chaos\": \"reset\"}")));
      }
      await().atMost(Duration.ofSeconds(30)).until(() -> proxy.heldBreaks() == 4);
      // the healthy calls stay in flight, answered, until the resets have failed
      proxy.holdAnswers();
      List<Future<String>> healthy = new ArrayList<>();
      for (int i = 0; i < 300; i++) {
        String text = "healthy " + i;
        healthy.add(
            callers.submit(
                () -> send(fleet, "***CALL_TOOL chaos__echo {\"text\": \"" + text + "\"}")));
      }
      await().atMost(Duration.ofSeconds(30)).until(() -> proxy.toolCallsInFlight() == 300);
      proxy.releaseBreaks();
      for (Future<String> reset : resets) {
        assertThat(reset.get(30, TimeUnit.SECONDS))
            .startsWith("Error: chaos/echo failed: the connection failed (");
      }
      proxy.releaseAnswers();
      for (int i = 0; i < healthy.size(); i++) {
        assertThat(healthy.get(i).get(60, TimeUnit.SECONDS)).isEqualTo("healthy " + i);
      }
      assertThat(get(fleet.registryBase() + "/metrics"))
          .contains(
              "pallas_tool_calls_total{agent=\"worker\",operation=\"tool\",outcome=\"error\",server=\"chaos\"} 4.0")
          .contains(
              "pallas_tool_calls_total{agent=\"worker\",operation=\"tool\",outcome=\"ok\",server=\"chaos\"} 300.0");
    }
  }

  @Test
  void getHealthTellsAServerWhoseCallsFailAndRecoversWithItsFirstGoodCall() throws Exception {
    try (ChaosProxy proxy = ChaosProxy.to(server.port());
        RunningFleet fleet =
            RunningFleet.start(
                """
                apiVersion: pallas.helu.ca/v1alpha1
                kind: PallasDeployment
                metadata: {name: honest}
                spec:
                  registry: {port: ${port:registry}}
                  defaultModel: passthrough
                  mcpServers: [{name: flaky, url: "%s", timeoutSeconds: 5}]
                  agents:
                    - {name: worker, port: ${port:worker}, servers: [flaky], instanceScope: request}
                """
                    .formatted(proxy.url()))) {
      await().until(() -> health(fleet).path("status").asText().equals("ok"));
      proxy.breakAll(Break.RESET);
      for (int i = 0; i < 3; i++) {
        assertThat(send(fleet, "***CALL_TOOL flaky__echo {\"text\": \"x\"}"))
            .startsWith("Error: flaky/echo failed: the connection failed (");
      }
      JsonNode broken = health(fleet);
      assertThat(broken.path("status").asText())
          .as("the server answers the probe's initialize, but its calls fail")
          .isEqualTo("degraded");
      assertThat(broken.path("message").asText())
          .startsWith(
              "Calls failing: flaky (3 of 3 calls in the last minute; the connection failed (");
      assertThat(get(fleet.registryBase() + "/metrics"))
          .contains(
              "pallas_tool_calls_total{agent=\"worker\",operation=\"tool\",outcome=\"error\",server=\"flaky\"} 3.0")
          .contains("pallas_agent_health_status{agent=\"worker\"} 0.5")
          .contains("pallas_downstream_up{agent=\"worker\",server=\"flaky\"} 1.0");

      proxy.breakAll(null);
      assertThat(send(fleet, "***CALL_TOOL flaky__echo {\"text\": \"back\"}")).isEqualTo("back");
      JsonNode repaired = health(fleet);
      assertThat(repaired.path("status").asText()).isEqualTo("ok");
      assertThat(repaired.has("message")).isFalse();
      assertThat(get(fleet.registryBase() + "/metrics"))
          .contains("pallas_agent_health_status{agent=\"worker\"} 1.0");
    }
  }

  private static String send(RunningFleet fleet, String message) throws Exception {
    RawMcp mcp = RawMcp.open(fleet.mcpUrl("worker"), null);
    return RawMcp.text(mcp.callTool("send_message", Map.of("message", message)));
  }

  private static JsonNode health(RunningFleet fleet) throws Exception {
    RawMcp mcp = RawMcp.open(fleet.mcpUrl("worker"), null);
    return JSON.readTree(RawMcp.text(mcp.callTool("get_health", Map.of())));
  }

  private static String get(String url) throws Exception {
    return HttpClient.newHttpClient()
        .send(HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString())
        .body();
  }
}
