package ca.helu.pallas.runtime.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.runtime.auth.StaticTokenFiles;
import ca.helu.pallas.runtime.serve.DefaultAgentParts;
import ca.helu.pallas.runtime.testing.FakeLlmServer;
import ca.helu.pallas.runtime.testing.JaegerServer;
import ca.helu.pallas.runtime.testing.JaegerServer.Span;
import ca.helu.pallas.runtime.testing.RawMcp;
import ca.helu.pallas.runtime.testing.RunningFleet;
import ca.helu.pallas.runtime.testing.TestMcpServer;
import ca.helu.pallas.runtime.tracing.Tracing;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.spec.McpSchema;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * Traces end to end with a real Jaeger (docs/observability.md): an MCP client's call with a {@code
 * traceparent} through coordinator → helper → an MCP server, the agents' LLM requests to the fake
 * provider, is one trace in Jaeger, its spans' parents and attributes as documented; with tracing
 * not configured nothing is exported and nothing is propagated.
 */
class TracingIT {
  @RegisterExtension static final JaegerServer JAEGER = new JaegerServer();

  /** Words of the user's message and the tool's arguments: never in a span. */
  private static final String MESSAGE = "classified-message-words";

  private static final String ARGUMENT = "classified-argument-words";

  private FakeLlmServer llm;
  private TestMcpServer tools;
  private RunningFleet fleet;

  @AfterEach
  void stop() {
    if (fleet != null) {
      fleet.close();
    }
    if (tools != null) {
      tools.close();
    }
    if (llm != null) {
      llm.close();
    }
  }

  private void startFleet(Map<String, String> env) throws Exception {
    llm = FakeLlmServer.openAi("m");
    tools = TestMcpServer.start();
    fleet =
        RunningFleet.start(
            """
            apiVersion: pallas.helu.ca/v1alpha1
            kind: PallasDeployment
            metadata: {name: traced}
            spec:
              registry: {port: ${port:registry}}
              providers:
                openai: {baseUrl: "%s", apiKey: {value: k}}
              mcpServers: [{name: tools, url: "%s"}]
              agents:
                - name: helper
                  port: ${port:helper}
                  model: openai.m
                  servers: [tools]
                  instanceScope: request
                - name: coordinator
                  port: ${port:coordinator}
                  model: openai.m
                  servers: [helper]
                  instanceScope: connection
            """
                .formatted(llm.baseUrl(), tools.url()),
            env);
    // coordinator asks helper, helper calls the tool, then each answers
    llm.then(
        llm.toolCall("c1", "helper__helper", "{\"message\":\"" + MESSAGE + "\"}"),
        // two tool calls at once: they run on worker threads, in the turn's trace context
        llm.toolCalls(
            List.of(
                new String[] {"c2", "tools__echo", "{\"text\":\"" + ARGUMENT + "\"}"},
                new String[] {"c3", "tools__fail", "{}"})),
        llm.text("helper done", 7, 3),
        llm.text("all done", 11, 2));
  }

  /** The official SDK client sending {@code traceparent} on every request. */
  private McpSyncClient client(String traceparent) {
    var transport =
        HttpClientStreamableHttpTransport.builder(fleet.baseUrl("coordinator"))
            .endpoint("/mcp")
            .requestBuilder(HttpRequest.newBuilder().header("traceparent", traceparent))
            .build();
    McpSyncClient client = McpClient.sync(transport).requestTimeout(Duration.ofSeconds(60)).build();
    client.initialize();
    return client;
  }

  private static String hex(int bytes) {
    byte[] b = new byte[bytes];
    ThreadLocalRandom.current().nextBytes(b);
    return HexFormat.of().formatHex(b);
  }

  @Test
  void aCallThroughTwoAgentsToAnMcpServerIsOneTrace() throws Exception {
    startFleet(
        Map.of(
            "OTEL_EXPORTER_OTLP_ENDPOINT", JAEGER.otlpEndpoint(),
            "OTEL_SERVICE_NAME", "pallas-traced",
            "OTEL_BSP_SCHEDULE_DELAY", "100"));
    String traceId = hex(16);
    String clientSpan = hex(8);
    ListAppender<ILoggingEvent> log = new ListAppender<>();
    log.start();
    Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    root.addAppender(log);
    try (McpSyncClient client = client("00-" + traceId + "-" + clientSpan + "-01")) {
      McpSchema.CallToolResult result =
          client.callTool(new McpSchema.CallToolRequest("send_message", Map.of("message", "go")));
      assertThat(result.isError()).isFalse();
    } finally {
      root.detachAppender(log);
    }

    // every span of the call: 2 turns (server span, invoke_agent), 4 LLM requests and 3 tool calls
    // (one of them the helper's); the coordinator's turn went ahead at once: no conversation wait
    List<Span> spans =
        await()
            .atMost(Duration.ofSeconds(30))
            .pollInterval(Duration.ofMillis(200))
            .until(() -> JAEGER.trace(traceId), s -> s.size() >= 11);
    assertThat(spans).allMatch(s -> s.service().equals("pallas-traced"));

    Span coordinatorCall = one(spans, s -> s.parentId().equals(Optional.of(clientSpan)));
    assertThat(coordinatorCall.name()).isEqualTo("tools/call send_message");
    assertThat(coordinatorCall.tag("span.kind")).isEqualTo("server");
    assertThat(coordinatorCall.tag("mcp.method.name")).isEqualTo("tools/call");
    assertThat(coordinatorCall.tag("gen_ai.tool.name")).isEqualTo("send_message");

    Span coordinator = childNamed(spans, coordinatorCall, "invoke_agent coordinator");
    assertThat(coordinator.tag("gen_ai.operation.name")).isEqualTo("invoke_agent");
    assertThat(coordinator.tag("gen_ai.agent.name")).isEqualTo("coordinator");
    assertThat(coordinator.tag("pallas.agent.scope")).isEqualTo("connection");
    assertThat(coordinator.tag("gen_ai.provider.name")).isEqualTo("openai");
    assertThat(childrenNamed(spans, coordinator, "wait conversation")).isEmpty();

    List<Span> coordinatorChats = childrenNamed(spans, coordinator, "chat m");
    assertThat(coordinatorChats).hasSize(2);
    assertThat(coordinatorChats)
        .extracting(s -> s.tag("gen_ai.response.finish_reasons"))
        .containsExactlyInAnyOrder("[\"tool_call\"]", "[\"stop\"]");
    Span lastChat =
        coordinatorChats.stream()
            .filter(s -> s.tag("gen_ai.response.finish_reasons").contains("stop"))
            .findFirst()
            .orElseThrow();
    assertThat(lastChat.tag("span.kind")).isEqualTo("client");
    assertThat(lastChat.tag("gen_ai.operation.name")).isEqualTo("chat");
    assertThat(lastChat.tag("gen_ai.provider.name")).isEqualTo("openai");
    assertThat(lastChat.tag("gen_ai.request.model")).isEqualTo("m");
    assertThat(lastChat.tag("gen_ai.usage.input_tokens")).isEqualTo("11");
    assertThat(lastChat.tag("gen_ai.usage.output_tokens")).isEqualTo("2");

    Span toHelper = childNamed(spans, coordinator, "tools/call helper");
    assertThat(toHelper.tag("span.kind")).isEqualTo("client");
    assertThat(toHelper.tag("gen_ai.operation.name")).isEqualTo("execute_tool");
    assertThat(toHelper.tag("pallas.mcp.server")).isEqualTo("helper");
    assertThat(toHelper.tag("pallas.peer.agent")).isEqualTo("helper");
    assertThat(toHelper.tag("server.address")).isEqualTo("127.0.0.1");

    Span helperCall = one(spans, s -> s.parentId().equals(Optional.of(toHelper.spanId())));
    assertThat(helperCall.name()).isEqualTo("tools/call helper");
    assertThat(helperCall.tag("span.kind")).isEqualTo("server");
    Span helper = childNamed(spans, helperCall, "invoke_agent helper");
    assertThat(helper.tag("pallas.agent.scope")).isEqualTo("request");
    assertThat(childrenNamed(spans, helper, "chat m")).hasSize(2);
    Span echo = childNamed(spans, helper, "tools/call echo");
    assertThat(echo.tag("pallas.mcp.server")).isEqualTo("tools");
    assertThat(echo.tag("gen_ai.tool.name")).isEqualTo("echo");
    assertThat(echo.tag("error.type")).isNull();
    assertThat(echo.tag("pallas.peer.agent")).isNull();
    Span fail = childNamed(spans, helper, "tools/call fail");
    assertThat(fail.tag("error.type")).isEqualTo("tool_error");
    assertThat(fail.tag("otel.status_code")).isEqualTo("ERROR");

    // the MCP server got each tool call's span as its parent, as a header and in params._meta
    String echoParent = "00-" + traceId + "-" + echo.spanId() + "-01";
    String failParent = "00-" + traceId + "-" + fail.spanId() + "-01";
    assertThat(tools.traceContexts())
        .containsExactlyInAnyOrder(
            new TestMcpServer.TraceContext(echoParent, echoParent),
            new TestMcpServer.TraceContext(failParent, failParent));
    // each LLM request carried its own span as parent
    List<String> llmParents =
        llm.chatRequests().stream().map(r -> r.header("traceparent")).toList();
    assertThat(llmParents)
        .hasSize(4)
        .allMatch(p -> p.startsWith("00-" + traceId + "-"))
        .doesNotHaveDuplicates();
    assertThat(llmParents.stream().map(p -> p.substring(36, 52)))
        .allMatch(
            id -> spans.stream().anyMatch(s -> s.spanId().equals(id) && s.name().equals("chat m")));

    // the helper's log line about the failed tool (logged on a worker thread) carries the trace
    assertThat(log.list)
        .filteredOn(e -> e.getFormattedMessage().startsWith("tool tools/fail failed"))
        .singleElement()
        .satisfies(e -> {
          assertThat(e.getMDCPropertyMap()).containsEntry("trace_id", traceId);
          assertThat(e.getMDCPropertyMap()).containsEntry("span_id", helperCall.spanId());
          assertThat(e.getMDCPropertyMap()).containsEntry("agent", "helper");
        });

    // no message, argument, answer or key in any span
    assertThat(spans)
        .flatExtracting(s -> List.copyOf(s.tags().values()))
        .noneMatch(v -> v.contains(MESSAGE) || v.contains(ARGUMENT) || v.contains("done"));
  }

  /**
   * A turn that waits for the turn before it in its conversation has a {@code wait conversation}
   * span, from its call to the end of the earlier turn; the earlier turn, which went ahead at once,
   * has none.
   */
  @Test
  void aTurnThatWaitsForItsConversationHasAWaitSpan() throws Exception {
    startFleet(
        Map.of(
            "OTEL_EXPORTER_OTLP_ENDPOINT", JAEGER.otlpEndpoint(),
            "OTEL_SERVICE_NAME", "pallas-waits",
            "OTEL_BSP_SCHEDULE_DELAY", "100"));
    llm.reset();
    llm.then(FakeLlmServer.delayed(1500, llm.text("first", 1, 1)), llm.text("second", 1, 1));
    RawMcp session = RawMcp.open(fleet.mcpUrl("coordinator"), null);
    String first = hex(16);
    String second = hex(16);
    CompletableFuture<Void> ahead =
        CompletableFuture.runAsync(() -> {
          try {
            callTraced(session, "send_message", Map.of("message", "one"), traceparent(first));
          } catch (Exception e) {
            throw new IllegalStateException(e);
          }
        });
    // the first turn holds the conversation: its LLM request is under way
    await().atMost(Duration.ofSeconds(10)).until(() -> llm.chatRequests().size() == 1);
    callTraced(session, "send_message", Map.of("message", "two"), traceparent(second));
    ahead.get(30, TimeUnit.SECONDS);

    List<Span> waited =
        await()
            .atMost(Duration.ofSeconds(30))
            .pollInterval(Duration.ofMillis(200))
            .until(() -> JAEGER.trace(second), s -> s.size() >= 4);
    Span turn = one(waited, s -> s.name().equals("invoke_agent coordinator"));
    Span wait = childNamed(waited, turn, "wait conversation");
    assertThat(wait.tag("pallas.conversation.turns_ahead")).isEqualTo("1");
    // from the second call until the first turn's LLM answered (1.5 s after it was asked)
    assertThat(wait.durationMicros()).isGreaterThan(500_000);
    List<Span> went =
        await()
            .atMost(Duration.ofSeconds(30))
            .pollInterval(Duration.ofMillis(200))
            .until(() -> JAEGER.trace(first), s -> s.size() >= 3);
    assertThat(went).extracting(Span::name).doesNotContain("wait conversation");
  }

  private static String traceparent(String traceId) {
    return "00-" + traceId + "-" + hex(8) + "-01";
  }

  /** With inbound authentication, the call's server span names its caller (issue 19 §1). */
  @Test
  void theCallsServerSpanNamesItsCaller(@TempDir Path tokens) throws Exception {
    Files.writeString(tokens.resolve("daedalus"), "daedalus-token-0123456789abcdef");
    fleet =
        RunningFleet.start(
            """
            apiVersion: pallas.helu.ca/v1alpha1
            kind: PallasDeployment
            metadata: {name: callers}
            spec:
              registry: {port: ${port:registry}}
              defaultModel: passthrough
              agents: [{name: solo, port: ${port:solo}}]
              auth: {staticTokens: {secretName: tokens}}
            """,
            Map.of(
                "OTEL_EXPORTER_OTLP_ENDPOINT", JAEGER.otlpEndpoint(),
                "OTEL_SERVICE_NAME", "pallas-callers",
                "OTEL_BSP_SCHEDULE_DELAY", "100"),
            o -> o.withStaticTokens(StaticTokenFiles.read(tokens)),
            DefaultAgentParts.Timings.DEFAULT);
    String traceId = hex(16);
    RawMcp.open(fleet.mcpUrl("solo"), "daedalus-token-0123456789abcdef")
        .request(
            "tools/call",
            Map.of(
                "name",
                "send_message",
                "arguments",
                Map.of("message", "hello"),
                "_meta",
                Map.of("traceparent", "00-" + traceId + "-" + hex(8) + "-01")));
    List<Span> spans =
        await()
            .atMost(Duration.ofSeconds(30))
            .pollInterval(Duration.ofMillis(200))
            .until(() -> JAEGER.trace(traceId), found -> !found.isEmpty());
    Span call = one(spans, s -> s.name().equals("tools/call send_message"));
    assertThat(call.tag("enduser.id")).isEqualTo("daedalus");
  }

  /**
   * With tracing on, a call's latency carries its trace as an exemplar in the OpenMetrics
   * exposition, which Prometheus asks for; the Prometheus text format has none (docs/
   * observability.md, "Exemplars").
   */
  @Test
  void aCallsLatencyCarriesItsTraceAsAnExemplar() throws Exception {
    fleet =
        RunningFleet.start(
            SOLO.formatted("exemplars"),
            Map.of(
                "OTEL_EXPORTER_OTLP_ENDPOINT",
                JAEGER.otlpEndpoint(),
                "OTEL_BSP_SCHEDULE_DELAY",
                "100"));
    String traceId = hex(16);
    callTraced(
        RawMcp.open(fleet.mcpUrl("solo"), null),
        "send_message",
        Map.of("message", "hello"),
        "00-" + traceId + "-" + hex(8) + "-01");

    HttpResponse<String> openMetrics =
        metrics("application/openmetrics-text; version=1.0.0,text/plain;version=0.0.4;q=0.5");
    assertThat(openMetrics.headers().firstValue("Content-Type").orElseThrow())
        .startsWith("application/openmetrics-text");
    assertThat(openMetrics.body())
        .containsPattern(
            "pallas_send_message_duration_seconds_bucket\\{agent=\"solo\",le=\"[^\"]+\"} \\S+"
                + " # \\{[^}]*trace_id=\""
                + traceId
                + "\"");
    HttpResponse<String> text = metrics(null);
    assertThat(text.headers().firstValue("Content-Type").orElseThrow()).startsWith("text/plain");
    assertThat(text.body())
        .contains("pallas_send_message_duration_seconds_bucket")
        .doesNotContain(traceId);
  }

  /**
   * get_health calls are sampled apart (docs/observability.md, "Spans"): not traced by default,
   * even when the caller's trace is sampled, while the calls beside them are; with {@code
   * PALLAS_TRACES_HEALTH_RATIO=1} each is a server span in its caller's trace.
   */
  @Test
  void getHealthIsTracedOnlyWhenItsOwnRatioSaysSo() throws Exception {
    for (String ratio : List.of("", "1")) {
      fleet =
          RunningFleet.start(
              SOLO.formatted("health"),
              Map.of(
                  "OTEL_EXPORTER_OTLP_ENDPOINT",
                  JAEGER.otlpEndpoint(),
                  "OTEL_BSP_SCHEDULE_DELAY",
                  "100",
                  Tracing.HEALTH_RATIO,
                  ratio));
      String healthTrace = hex(16);
      String healthParent = hex(8);
      String callTrace = hex(16);
      RawMcp mcp = RawMcp.open(fleet.mcpUrl("solo"), null);
      callTraced(mcp, "get_health", Map.of(), "00-" + healthTrace + "-" + healthParent + "-01");
      callTraced(
          mcp,
          "send_message",
          Map.of("message", "hello"),
          "00-" + callTrace + "-" + hex(8) + "-01");
      // the call's trace arrives after the health span, which ended first, would have
      await()
          .atMost(Duration.ofSeconds(30))
          .pollInterval(Duration.ofMillis(200))
          .until(() -> JAEGER.trace(callTrace), found -> !found.isEmpty());
      if (ratio.isEmpty()) {
        assertThat(JAEGER.trace(healthTrace)).as("not traced by default").isEmpty();
      } else {
        List<Span> spans =
            await()
                .atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(200))
                .until(() -> JAEGER.trace(healthTrace), found -> !found.isEmpty());
        Span health = one(spans, s -> s.name().equals("tools/call get_health"));
        assertThat(health.parentId()).hasValue(healthParent);
        assertThat(health.tag("gen_ai.tool.name")).isEqualTo("get_health");
      }
      fleet.close();
      fleet = null;
    }
  }

  /** A fleet of one passthrough agent, solo, named by its argument. */
  private static final String SOLO =
      """
      apiVersion: pallas.helu.ca/v1alpha1
      kind: PallasDeployment
      metadata: {name: %s}
      spec:
        registry: {port: ${port:registry}}
        defaultModel: passthrough
        agents: [{name: solo, port: ${port:solo}}]
      """;

  /** A tools/call whose {@code params._meta} carries {@code traceparent}. */
  private static void callTraced(
      RawMcp mcp, String tool, Map<String, ?> arguments, String traceparent) throws Exception {
    mcp.request(
        "tools/call",
        Map.of("name", tool, "arguments", arguments, "_meta", Map.of("traceparent", traceparent)));
  }

  private HttpResponse<String> metrics(String accept) throws Exception {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create(fleet.baseUrl("solo") + "/metrics"));
    if (accept != null) {
      request.header("Accept", accept);
    }
    try (HttpClient http = HttpClient.newHttpClient()) {
      return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }
  }

  @Test
  void withTracingNotConfiguredNothingIsExportedOrPropagated() throws Exception {
    startFleet(Map.of());
    String traceId = hex(16);
    try (McpSyncClient client = client("00-" + traceId + "-" + hex(8) + "-01")) {
      assertThat(
              client
                  .callTool(new McpSchema.CallToolRequest("send_message", Map.of("message", "go")))
                  .isError())
          .isFalse();
    }
    assertThat(llm.chatRequests()).hasSize(4).allMatch(r -> r.header("traceparent") == null);
    assertThat(tools.traceContexts())
        .containsExactly(
            new TestMcpServer.TraceContext("none", "none"),
            new TestMcpServer.TraceContext("none", "none"));
    // no exporter thread runs in this process (the other test's fleet is closed by now)
    assertThat(Thread.getAllStackTraces().keySet())
        .noneMatch(t -> t.getName().startsWith("BatchSpanProcessor"));
    await()
        .during(Duration.ofSeconds(2))
        .atMost(Duration.ofSeconds(5))
        .until(() -> JAEGER.trace(traceId), List::isEmpty);
  }

  private static Span one(List<Span> spans, Predicate<Span> which) {
    List<Span> found = spans.stream().filter(which).toList();
    assertThat(found).as("spans matching in %s", spans).hasSize(1);
    return found.getFirst();
  }

  private static Span childNamed(List<Span> spans, Span parent, String name) {
    return one(
        spans, s -> s.parentId().equals(Optional.of(parent.spanId())) && s.name().equals(name));
  }

  private static List<Span> childrenNamed(List<Span> spans, Span parent, String name) {
    return spans.stream()
        .filter(s -> s.parentId().equals(Optional.of(parent.spanId())) && s.name().equals(name))
        .toList();
  }
}
