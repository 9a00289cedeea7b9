package ca.helu.pallas.runtime.metrics;

import io.micrometer.core.instrument.Clock;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.FileDescriptorMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntSupplier;
import java.util.function.LongSupplier;

/**
 * The metrics of docs/contract.md, with their exact names, types and labels, plus JVM and process
 * metrics. One instance per process: in serve mode every agent's /metrics shows the same snapshot.
 */
public final class PallasMetrics {
  /** Prometheus text exposition content type. */
  public static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

  /** OpenMetrics, the only exposition that carries exemplars (docs/observability.md). */
  public static final String OPENMETRICS_CONTENT_TYPE =
      "application/openmetrics-text; version=1.0.0; charset=utf-8";

  private static final Duration[] CALL_BUCKETS = {
    Duration.ofMillis(5),
    Duration.ofMillis(10),
    Duration.ofMillis(25),
    Duration.ofMillis(50),
    Duration.ofMillis(100),
    Duration.ofMillis(250),
    Duration.ofMillis(500),
    Duration.ofSeconds(1),
    Duration.ofMillis(2500),
    Duration.ofSeconds(5),
    Duration.ofSeconds(10),
    Duration.ofSeconds(30),
    Duration.ofSeconds(60),
    Duration.ofSeconds(120),
    Duration.ofSeconds(300)
  };

  private final PrometheusMeterRegistry registry;
  private final Map<String, AtomicLong> gauges = new ConcurrentHashMap<>();

  public PallasMetrics() {
    this(false);
  }

  /**
   * @param exemplars whether latencies carry the trace they were observed in as exemplars (with
   *     tracing on: docs/observability.md, "Exemplars")
   */
  public PallasMetrics(boolean exemplars) {
    registry =
        exemplars
            ? new PrometheusMeterRegistry(
                PrometheusConfig.DEFAULT,
                new PrometheusRegistry(),
                Clock.SYSTEM,
                new TraceExemplars())
            : new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    gauge("pallas.up", "1 while the Pallas process is running", Tags.empty()).set(1000);
  }

  /**
   * Adds JVM and process metrics. Binding them loads the management beans (about half a second on 2
   * cores), so serve does it once agents are listening rather than before.
   */
  public void bindJvmMetrics() {
    new ClassLoaderMetrics().bindTo(registry);
    new JvmMemoryMetrics().bindTo(registry);
    new JvmGcMetrics().bindTo(registry);
    new JvmThreadMetrics().bindTo(registry);
    new ProcessorMetrics().bindTo(registry);
    new UptimeMetrics().bindTo(registry);
    new FileDescriptorMetrics().bindTo(registry);
  }

  /** pallas_agent_info{agent, port} = 1, for an agent this process serves (docs/metrics.md). */
  public void agentInfo(String agent, int port) {
    gauge(
            "pallas.agent.info",
            "1 per agent this process serves; a label join source",
            Tags.of("agent", agent, "port", Integer.toString(port)))
        .set(1000);
  }

  /**
   * Meters registered once and then reused: building and looking a meter up on every call (its id,
   * tags and buckets) cost more CPU than the passthrough model's whole turn. A series still appears
   * with its first use.
   */
  private final Map<String, Counter> sendMessageOk = new ConcurrentHashMap<>();

  private final Map<String, Counter> sendMessageError = new ConcurrentHashMap<>();
  private final Map<String, Timer> sendMessageDuration = new ConcurrentHashMap<>();

  /** pallas_send_message_total{agent, outcome} and pallas_send_message_duration_seconds{agent}. */
  public void sendMessage(String agent, boolean ok, Duration duration) {
    String outcome = ok ? "ok" : "error";
    (ok ? sendMessageOk : sendMessageError)
        .computeIfAbsent(
            agent,
            a ->
                Counter.builder("pallas.send_message")
                    .description("send_message MCP calls")
                    .tags("agent", a, "outcome", outcome)
                    .register(registry))
        .increment();
    sendMessageDuration
        .computeIfAbsent(
            agent,
            a ->
                Timer.builder("pallas.send_message.duration")
                    .description("End-to-end MCP send_message wall-clock duration")
                    .tags("agent", a)
                    .serviceLevelObjectives(CALL_BUCKETS)
                    .register(registry))
        .record(duration);
  }

  private final Map<List<String>, Counter> limitRefusals = new ConcurrentHashMap<>();

  /**
   * pallas_caller_limit_refusals_total{agent, limit}: calls refused for a per-caller limit (docs/
   * runtime.md, "Per-caller limits"); the caller is not a label (bounded series).
   */
  public void callerLimitRefused(String agent, String limit) {
    limitRefusals
        .computeIfAbsent(
            List.of(agent, limit),
            k ->
                Counter.builder("pallas.caller.limit.refusals")
                    .description("Calls refused for a per-caller limit")
                    .tags("agent", agent, "limit", limit)
                    .register(registry))
        .increment();
  }

  private final Map<List<String>, Counter> llmCounters = new ConcurrentHashMap<>();

  /** pallas_llm_turns_total{agent, model} and pallas_llm_tokens_total{agent, model, kind}. */
  public void llmTurn(String agent, String model, Map<String, Long> tokensByKind) {
    llmCounters
        .computeIfAbsent(
            List.of(agent, model),
            k ->
                Counter.builder("pallas.llm.turns")
                    .description("LLM provider round-trips per agent/model")
                    .tags("agent", agent, "model", model)
                    .register(registry))
        .increment();
    tokensByKind.forEach((kind, count) ->
        llmCounters
            .computeIfAbsent(
                List.of(agent, model, kind),
                k ->
                    Counter.builder("pallas.llm.tokens")
                        .description("Tokens consumed")
                        .tags("agent", agent, "model", model, "kind", kind)
                        .register(registry))
            .increment(count));
  }

  /** pallas_tool_calls_total and pallas_tool_call_duration_seconds. */
  public void toolCall(
      String agent, String server, String operation, boolean ok, Duration duration) {
    Counter.builder("pallas.tool.calls")
        .description("Downstream MCP operations dispatched")
        .tags(
            "agent",
            agent,
            "server",
            server,
            "operation",
            operation,
            "outcome",
            ok ? "ok" : "error")
        .register(registry)
        .increment();
    Timer.builder("pallas.tool.call.duration")
        .description("Downstream MCP operation duration")
        .tags("agent", agent, "server", server, "operation", operation)
        .serviceLevelObjectives(CALL_BUCKETS)
        .register(registry)
        .record(duration);
  }

  /** The most (server, tool) pairs the registry's call metrics name; the rest are "other". */
  static final int MAX_REGISTRY_TOOLS = 1000;

  private final Set<List<String>> registryTools = ConcurrentHashMap.newKeySet();

  /**
   * pallas_registry_tool_calls_total{server,tool,outcome} and
   * pallas_registry_tool_call_duration_seconds{server,tool}: the registry's call_tool, per server
   * (or agent) and tool. The labels are bounded: servers and agents come from the manifest, tools
   * from the index, and past {@link #MAX_REGISTRY_TOOLS} pairs a new tool is counted as "other".
   */
  public void registryToolCall(String server, String tool, boolean ok, Duration duration) {
    List<String> pair = List.of(server, tool);
    if (!registryTools.contains(pair)) {
      if (registryTools.size() >= MAX_REGISTRY_TOOLS) {
        tool = "other";
      } else {
        registryTools.add(pair);
      }
    }
    Counter.builder("pallas.registry.tool.calls")
        .description("Tool calls made through the registry's call_tool")
        .tags("server", server, "tool", tool, "outcome", ok ? "ok" : "error")
        .register(registry)
        .increment();
    Timer.builder("pallas.registry.tool.call.duration")
        .description("Duration of tool calls made through the registry's call_tool")
        .tags("server", server, "tool", tool)
        .serviceLevelObjectives(CALL_BUCKETS)
        .register(registry)
        .record(duration);
  }

  /** pallas_registry_indexed_tools: the tools the registry's find_tools searches now. */
  public void registryIndexedTools(IntSupplier tools) {
    Gauge.builder("pallas.registry.indexed.tools", tools::getAsInt)
        .description("Tools the registry's find_tools searches: every agent's and server's")
        .register(registry);
  }

  private final Map<String, Timer> queueWait = new ConcurrentHashMap<>();

  /** pallas_send_message_queue_seconds{agent}: time a call waited for its conversation's turn. */
  public void queueWait(String agent, Duration waited) {
    queueWait
        .computeIfAbsent(
            agent,
            a ->
                Timer.builder("pallas.send.message.queue")
                    .description(
                        "Time a send_message call waited for the calls before it on its"
                            + " conversation")
                    .tags("agent", a)
                    .serviceLevelObjectives(CALL_BUCKETS)
                    .register(registry))
        .record(waited);
  }

  /** pallas_downstream_up{agent, server}. */
  public void downstreamUp(String agent, String server, boolean up) {
    gauge(
            "pallas.downstream.up",
            "1 when the downstream MCP server passed its last probe",
            Tags.of("agent", agent, "server", server))
        .set(up ? 1000 : 0);
  }

  /** pallas_llm_provider_up{provider}. */
  public void providerUp(String provider, boolean up) {
    gauge(
            "pallas.llm.provider.up",
            "1 when the LLM provider passed its last preflight or re-probe",
            Tags.of("provider", provider))
        .set(up ? 1000 : 0);
  }

  /**
   * pallas_store_up: 1 while the conversation store (PostgreSQL) answered its last use or check;
   * exported only by a process that has one (docs/runtime.md, "When the conversation store fails").
   */
  public void storeUp(boolean up) {
    gauge(
            "pallas.store.up",
            "1 when the conversation store answered its last use or check",
            Tags.empty())
        .set(up ? 1000 : 0);
  }

  /** pallas_agent_health_status{agent}: 1 ok, 0.5 degraded, 0 error. */
  public void healthStatus(String agent, double value) {
    gauge(
            "pallas.agent.health.status",
            "Aggregate of the last get_health: 1 ok, 0.5 degraded, 0 error",
            Tags.of("agent", agent))
        .set(Math.round(value * 1000));
  }

  /**
   * pallas_history_sessions{agent} (histories held: MCP sessions for connection scope) and
   * pallas_history_bytes{agent} (their message content, estimated at 2 bytes a character).
   */
  public void histories(String agent, IntSupplier sessions, LongSupplier bytes) {
    agentGauge(
        "pallas.history.sessions",
        "Conversation histories the agent holds",
        agent,
        sessions::getAsInt);
    agentGauge(
        "pallas.history.bytes",
        "Estimated bytes of message content in the agent's histories",
        agent,
        bytes);
  }

  /**
   * pallas_send_message_in_flight{agent}: send_message calls in progress, queued for their
   * conversation or running; the metric an agent's HorizontalPodAutoscaler follows
   * (docs/operations.md, "Scaling").
   */
  public void sendMessagesInFlight(String agent, IntSupplier calls) {
    agentGauge(
        "pallas.send.message.in.flight",
        "send_message calls in progress (queued or running)",
        agent,
        calls::getAsInt);
  }

  /** pallas_mcp_sessions{agent}: MCP sessions the agent's transport holds. */
  public void sessions(String agent, IntSupplier sessions) {
    agentGauge("pallas.mcp.sessions", "MCP sessions the agent holds", agent, sessions::getAsInt);
  }

  /** pallas_http_connections{agent}: connections open on the agent's port. */
  public void connections(String agent, LongSupplier open) {
    agentGauge(
        "pallas.http.connections",
        "Connections open on the agent's port (at most --max-connections)",
        agent,
        open);
  }

  /**
   * pallas_tool_calls_in_flight{agent, server} and pallas_tool_calls_waiting{agent, server}: an
   * agent's calls to one downstream server running, and waiting for a place under its
   * maxConcurrentCalls.
   */
  public void toolCallsAtOnce(
      String agent, String server, IntSupplier inFlight, IntSupplier waiting) {
    Gauge.builder("pallas.tool.calls.in.flight", inFlight, v -> v.getAsInt())
        .strongReference(true)
        .description("Tool calls to the server in flight (at most its maxConcurrentCalls)")
        .tags("agent", agent, "server", server)
        .register(registry);
    Gauge.builder("pallas.tool.calls.waiting", waiting, v -> v.getAsInt())
        .strongReference(true)
        .description("Tool calls waiting for a place under the server's maxConcurrentCalls")
        .tags("agent", agent, "server", server)
        .register(registry);
  }

  /** A gauge of one agent, read from {@code value} at each scrape. */
  private void agentGauge(String name, String help, String agent, LongSupplier value) {
    Gauge.builder(name, value, v -> v.getAsLong())
        .strongReference(true)
        .description(help)
        .tags("agent", agent)
        .register(registry);
  }

  /** The Prometheus text exposition of every metric. */
  public String scrape() {
    return registry.scrape();
  }

  /**
   * Every metric in {@code contentType}: {@link #CONTENT_TYPE} or {@link
   * #OPENMETRICS_CONTENT_TYPE}.
   */
  public String scrape(String contentType) {
    return registry.scrape(contentType);
  }

  /**
   * The exposition a scraper asks for in its {@code Accept} header: OpenMetrics when it names it
   * (as Prometheus does), else the Prometheus text format.
   */
  public static String contentType(String accept) {
    return accept != null && accept.contains("application/openmetrics-text")
        ? OPENMETRICS_CONTENT_TYPE
        : CONTENT_TYPE;
  }

  /** Gauges hold thousandths so that 0.5 is exact. */
  private AtomicLong gauge(String name, String help, Tags tags) {
    String key = name + tags;
    return gauges.computeIfAbsent(
        key,
        k -> {
          AtomicLong value = new AtomicLong();
          Gauge.builder(name, value, v -> v.get() / 1000.0)
              .description(help)
              .tags(tags)
              .register(registry);
          return value;
        });
  }
}
