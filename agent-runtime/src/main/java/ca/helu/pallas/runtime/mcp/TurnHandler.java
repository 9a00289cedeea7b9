package ca.helu.pallas.runtime.mcp;

import ca.helu.pallas.api.InstanceScope;
import ca.helu.pallas.runtime.auth.Caller;
import ca.helu.pallas.runtime.loop.AgentLoop;
import ca.helu.pallas.runtime.loop.CallContext;
import ca.helu.pallas.runtime.loop.CallerId;
import ca.helu.pallas.runtime.loop.Cancellation;
import ca.helu.pallas.runtime.loop.TokenTally;
import ca.helu.pallas.runtime.loop.TurnResult;
import ca.helu.pallas.runtime.loop.TurnSlot;
import ca.helu.pallas.runtime.metrics.PallasMetrics;
import ca.helu.pallas.runtime.store.AgentHistories;
import ca.helu.pallas.runtime.store.StoreException;
import ca.helu.pallas.runtime.tracing.ConversationWait;
import ca.helu.pallas.runtime.tracing.SpanKeys;
import ca.helu.pallas.runtime.tracing.Tracing;
import dev.langchain4j.data.message.UserMessage;
import io.modelcontextprotocol.server.McpAsyncServerExchange;
import io.modelcontextprotocol.spec.McpSchema;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * One send_message call (docs/runtime.md, "Conversations and concurrency"): refused while the agent
 * drains, its arguments checked, queued behind earlier calls of its conversation, the agent loop
 * run with the caller's bearer and progress, and the answer or the failure returned as a tool
 * result. A call still queued or running at the drain deadline is answered, never cut off.
 *
 * <p>A call may stop early (docs/runtime.md, "Deadlines and cancellation"): past the turn's
 * deadline it is answered at once with an error naming the model and the deadline; cancelled,
 * disconnected or its session deleted, it is answered with nothing (the SDK then ends its stream
 * without a response). Either way its conversation is free for the next call at once, what it was
 * waiting for is cancelled, and it adds nothing to the history.
 */
final class TurnHandler {
  private static final Logger LOG = LoggerFactory.getLogger(TurnHandler.class);

  /** Where a call's turn runs: virtual threads, so a slow LLM never holds an I/O thread. */
  private static final Scheduler CALLS =
      Schedulers.fromExecutorService(Executors.newVirtualThreadPerTaskExecutor(), "pallas-calls");

  /** The transport context's key for the caller's Authorization header. */
  static final String AUTHORIZATION = "authorization";

  /** The transport context's key for the authenticated {@link Caller}. */
  static final String CALLER = "pallas.caller";

  /**
   * One line per call on this logger (docs/operations.md, "Audit"): who, which agent and tool, the
   * outcome, how long, how many LLM tokens.
   */
  private static final Logger AUDIT = LoggerFactory.getLogger("pallas.audit");

  /** The transport context's key for the call's {@link Cancellation}. */
  static final String CANCELLATION = "pallas.cancellation";

  /** The transport context's keys for the caller's W3C trace context headers. */
  static final String TRACEPARENT = "traceparent";

  static final String TRACESTATE = "tracestate";

  private final String agent;
  private final AgentLoop loop;
  private final boolean vision;
  private final int maxMessageChars;
  private final InstanceScope scope;
  private final Conversations conversations;
  private final PallasMetrics metrics;
  private final InFlight inFlight;
  private final CallerLimits limits;
  private final Duration deadline;
  private final Tracing tracing;
  private final Tracer tracer;
  private final String invokeAgentSpan;
  private final String agentToolSpan;
  private final String scopeName;

  TurnHandler(
      AgentCard card,
      AgentLoop loop,
      InstanceScope scope,
      Conversations conversations,
      PallasMetrics metrics,
      InFlight inFlight,
      Duration deadline,
      CallerLimits limits,
      Tracing tracing) {
    this.agent = card.name();
    this.limits = limits;
    this.loop = loop;
    this.vision = card.capabilities().vision();
    // a message the model could read in full
    this.maxMessageChars =
        (int) Math.min(SendMessageArgs.MAX_MESSAGE_CHARS, card.capabilities().contextChars());
    this.scope = scope;
    this.conversations = conversations;
    this.metrics = metrics;
    this.inFlight = inFlight;
    this.deadline = deadline;
    this.tracing = tracing;
    this.tracer = tracing.tracer();
    this.invokeAgentSpan = "invoke_agent " + agent;
    this.agentToolSpan = "tools/call " + agent;
    this.scopeName = scope.name().toLowerCase(Locale.ROOT);
  }

  /** The answer to one call of send_message or of the tool named after the agent. */
  Mono<McpSchema.CallToolResult> handle(
      McpAsyncServerExchange exchange, McpSchema.CallToolRequest request) {
    Cancellation call =
        exchange.transportContext().get(CANCELLATION) instanceof Cancellation c
            ? c
            : new Cancellation();
    // a stop settles the answer before the turn's thread is interrupted: past the deadline an
    // error, otherwise none at all (the specification: no response to a cancelled request)
    Sinks.One<McpSchema.CallToolResult> stopped = Sinks.one();
    call.onStop(why -> {
      if (why == Cancellation.Reason.DEADLINE) {
        String message = deadlinePassed(call);
        LOG.info("{}", message);
        stopped.tryEmitValue(error(message));
      } else {
        stopped.tryEmitEmpty();
      }
    });
    Caller caller = caller(exchange);
    CallerLimits.Admission admission;
    try {
      admission = limits.admit(caller == null ? null : caller.name());
    } catch (CallerLimits.Refused refused) {
      // refused before it starts: a JSON-RPC error naming the limit (docs/runtime.md,
      // "Per-caller limits"), counted, in the audit line
      metrics.callerLimitRefused(agent, refused.limit);
      LOG.debug("refused a call: {}", refused.getMessage());
      if (caller != null) {
        MDC.put("caller", caller.name());
        if (caller.via() != null) {
          MDC.put("via", caller.via());
        }
      }
      audit(request.name(), "refused", System.nanoTime(), new TokenTally());
      MDC.clear();
      return Mono.error(refused.asMcpError());
    }
    // a turn that stopped gives no signal of its own: the stop's answer is the only one
    Mono<McpSchema.CallToolResult> turn =
        Mono.fromCallable(() -> run(exchange, request, call, admission))
            .subscribeOn(CALLS)
            .flatMap(answer -> answer.map(Mono::just).orElseGet(Mono::never));
    // at the drain deadline a call still queued or running is answered, not cut off
    Mono<McpSchema.CallToolResult> shutdown =
        inFlight
            .expiry()
            .then(
                Mono.fromCallable(() -> {
                  metrics.sendMessage(agent, false, Duration.ZERO);
                  return error(
                      "agent '"
                          + agent
                          + "' is shutting down and could not finish this call; retry on another"
                          + " replica");
                }));
    // however the call ends (its turn, a stop, the drain's deadline), its place is given back
    return Mono.firstWithSignal(turn, shutdown, stopped.asMono())
        .doFinally(signal -> admission.release());
  }

  /**
   * The call's answer, in the call's span (docs/observability.md, "Spans"): a server span after the
   * MCP semantic conventions, child of the caller's trace context; empty when the call stopped
   * first (its answer is the stop's).
   */
  private Optional<McpSchema.CallToolResult> run(
      McpAsyncServerExchange exchange,
      McpSchema.CallToolRequest request,
      Cancellation call,
      CallerLimits.Admission admission) {
    if (!call.attach()) {
      return Optional.empty();
    }
    Span span = serverSpan(exchange, request);
    try (Scope current = span.makeCurrent()) {
      Optional<McpSchema.CallToolResult> answer = runInSpan(exchange, request, call, admission);
      if (answer.isEmpty()) {
        span.setAttribute(SpanKeys.ERROR_TYPE, "cancelled");
      } else if (Boolean.TRUE.equals(answer.get().isError())) {
        span.setAttribute(SpanKeys.ERROR_TYPE, "tool_error");
        span.setStatus(StatusCode.ERROR);
      }
      return answer;
    } finally {
      span.end();
    }
  }

  /**
   * A call's server span after the MCP semantic conventions, child of the caller's trace context
   * (docs/observability.md, "Spans"); get_health's is sampled apart (tracing.HealthApartSampler).
   */
  private Span serverSpan(McpAsyncServerExchange exchange, McpSchema.CallToolRequest request) {
    Span span =
        tracer
            .spanBuilder(serverSpanName(request.name()))
            .setParent(callerContext(exchange, request))
            .setSpanKind(SpanKind.SERVER)
            .setAttribute(SpanKeys.MCP_METHOD, "tools/call")
            .setAttribute(SpanKeys.OPERATION, "execute_tool")
            .setAttribute(SpanKeys.TOOL, request.name())
            .startSpan();
    Caller caller = caller(exchange);
    if (caller != null) { // with inbound authentication: who calls (docs/observability.md, "Spans")
      span.setAttribute(SpanKeys.ENDUSER, caller.name());
    }
    return span;
  }

  /** The server span's name, made once for each of the agent's tools. */
  private String serverSpanName(String tool) {
    return switch (tool) {
      case "send_message" -> "tools/call send_message";
      case "get_health" -> "tools/call get_health";
      default -> tool.equals(agent) ? agentToolSpan : "tools/call " + tool;
    };
  }

  /** A call answered at once by {@code answer} (get_health), in its server span. */
  Mono<McpSchema.CallToolResult> inSpan(
      McpAsyncServerExchange exchange,
      McpSchema.CallToolRequest request,
      Supplier<McpSchema.CallToolResult> answer) {
    return Mono.fromSupplier(() -> {
      Span span = serverSpan(exchange, request);
      try (Scope current = span.makeCurrent()) {
        return answer.get();
      } finally {
        span.end();
      }
    });
  }

  /** The trace context the caller sent, in {@code params._meta} or in HTTP headers. */
  private Context callerContext(
      McpAsyncServerExchange exchange, McpSchema.CallToolRequest request) {
    if (!tracing.on()) {
      return Context.root();
    }
    return tracing.callerContext(
        request.meta(),
        exchange.transportContext().get(TRACEPARENT) instanceof String traceparent
            ? traceparent
            : null,
        exchange.transportContext().get(TRACESTATE) instanceof String tracestate
            ? tracestate
            : null);
  }

  private Optional<McpSchema.CallToolResult> runInSpan(
      McpAsyncServerExchange exchange,
      McpSchema.CallToolRequest request,
      Cancellation call,
      CallerLimits.Admission admission) {
    long start = System.nanoTime();
    String requestId = requestId();
    Caller caller = caller(exchange);
    MDC.put("agent", agent);
    MDC.put("request_id", requestId);
    if (caller != null) {
      // the caller on every line of the call (docs/operations.md, "Audit")
      MDC.put("caller", caller.name());
      if (caller.client() != null) {
        MDC.put("client", caller.client());
      }
      // the agent of the fleet it came through (docs/runtime.md, "Agents calling agents")
      if (caller.via() != null) {
        MDC.put("via", caller.via());
      }
    }
    SpanContext traced = Span.current().getSpanContext();
    if (traced.isValid()) {
      // logs and traces meet on these (docs/observability.md, "Logs")
      MDC.put("trace_id", traced.getTraceId());
      MDC.put("span_id", traced.getSpanId());
    }
    boolean ok = false;
    String outcome = "error";
    TokenTally tokens = new TokenTally();
    if (!inFlight.enter()) {
      metrics.sendMessage(agent, false, Duration.ofNanos(System.nanoTime() - start));
      audit(request.name(), "refused", start, tokens);
      MDC.clear();
      return answer(
          call, error("agent '" + agent + "' is shutting down; retry on another replica"));
    }
    try {
      SendMessageArgs args;
      try {
        args = SendMessageArgs.parse(request.arguments(), vision, agent, maxMessageChars);
      } catch (SendMessageArgs.InvalidArguments e) {
        return answer(call, error("invalid arguments: " + e.getMessage()));
      }
      CallContext ctx =
          new CallContext(
              requestId,
              bearer(exchange),
              Optional.ofNullable(caller).map(c -> new CallerId(c.name(), c.client())),
              McpProgress.forCall(exchange, request.progressToken(), agent),
              call,
              tokens);
      TurnResult result = invokeAgent(exchange, McpMessages.userMessage(args), ctx, caller);
      if (result == null) {
        outcome = "stopped";
        LOG.debug("call stopped: {}", call.reason());
        return Optional.empty();
      }
      ok = result.ok();
      outcome = ok ? "ok" : "error";
      return Optional.of(
          ok
              ? McpSchema.CallToolResult.builder()
                  .addTextContent(result.text())
                  .isError(false)
                  .build()
              : error(result.text()));
    } catch (RuntimeException e) {
      if (call.stopped()) {
        outcome = "stopped";
        LOG.debug("call stopped: {} ({})", call.reason(), e.toString());
        return Optional.empty();
      }
      LOG.error("send_message failed", e);
      return answer(
          call, error("internal error in agent '" + agent + "' (request " + requestId + ")"));
    } finally {
      admission.charge(tokens.of("input") + tokens.of("output"));
      admission.release();
      call.detach();
      metrics.sendMessage(agent, ok, Duration.ofNanos(System.nanoTime() - start));
      inFlight.exit();
      audit(request.name(), outcome, start, tokens);
      MDC.clear();
    }
  }

  /**
   * The call's audit line: the caller and client come from the MDC (absent without inbound
   * authentication), the rest is said here, each field bounded (the tool is one of ours).
   */
  private void audit(String tool, String outcome, long start, TokenTally tokens) {
    AUDIT.info(
        "call caller={} client={} agent={} tool={} outcome={} duration_ms={}"
            + " llm_input_tokens={} llm_output_tokens={} via={}",
        Objects.requireNonNullElse(MDC.get("caller"), "-"),
        Objects.requireNonNullElse(MDC.get("client"), "-"),
        agent,
        tool,
        outcome,
        Duration.ofNanos(System.nanoTime() - start).toMillis(),
        tokens.of("input"),
        tokens.of("output"),
        Objects.requireNonNullElse(MDC.get("via"), "-"));
  }

  /** The caller the edge authenticated, or null (no inbound authentication). */
  static Caller caller(McpAsyncServerExchange exchange) {
    return exchange.transportContext().get(CALLER) instanceof Caller c ? c : null;
  }

  /** {@code result}, unless the call stopped first. */
  private static Optional<McpSchema.CallToolResult> answer(
      Cancellation call, McpSchema.CallToolResult result) {
    return call.finish() ? Optional.of(result) : Optional.empty();
  }

  /** The turn in its {@code invoke_agent} span (the GenAI semantic conventions' agent span). */
  private TurnResult invokeAgent(
      McpAsyncServerExchange exchange, UserMessage user, CallContext ctx, Caller caller) {
    Span span =
        tracer
            .spanBuilder(invokeAgentSpan)
            .setAttribute(SpanKeys.OPERATION, "invoke_agent")
            .setAttribute(SpanKeys.AGENT, agent)
            .setAttribute(SpanKeys.PROVIDER, loop.model().provider())
            .setAttribute(SpanKeys.REQUEST_MODEL, loop.model().modelName())
            .setAttribute(SpanKeys.SCOPE, scopeName)
            .startSpan();
    try (Scope current = span.makeCurrent()) {
      TurnResult result = turn(exchange, user, ctx, caller);
      if (result == null) {
        span.setAttribute(SpanKeys.ERROR_TYPE, "cancelled");
      } else if (!result.ok()) {
        span.setAttribute(SpanKeys.ERROR_TYPE, "turn_failed");
        span.setStatus(StatusCode.ERROR);
      }
      return result;
    } finally {
      span.end();
    }
  }

  /**
   * The agent loop on the conversation's history, one turn at a time per conversation (in this
   * process by its turn slot, across replicas by the store's hold), within the turn's deadline;
   * null when the call stopped (then nothing is added to the history). A store that fails fails the
   * call with an error naming it, and the history holds no part of the turn (docs/runtime.md, "When
   * the conversation store fails").
   */
  private TurnResult turn(
      McpAsyncServerExchange exchange, UserMessage user, CallContext ctx, Caller caller) {
    Cancellation call = ctx.cancellation();
    if (scope == InstanceScope.REQUEST) {
      call.startDeadline(deadline);
      TurnResult r = loop.run(List.of(), user, ctx);
      return call.finish() ? r : null;
    }
    String conversation = conversations.conversationOf(exchange.sessionId(), caller);
    AgentHistories histories = conversations.histories();
    TurnSlot slot = conversations.join(conversation);
    int ahead = slot.waiting();
    // the wait for the conversation's earlier turns, here and on other replicas
    ConversationWait wait = tracing.conversationWait(ahead);
    try {
      if (ahead > 0) {
        ctx.progress()
            .relay(
                agent
                    + " is answering "
                    + ahead
                    + (ahead == 1 ? " call" : " calls")
                    + " of this conversation first; waiting",
                false);
      }
      long queued = System.nanoTime();
      return slot.exclusive(
          call,
          () -> {
            try (AgentHistories.Hold hold =
                histories.hold(
                    conversation,
                    call,
                    () -> {
                      wait.elsewhere();
                      ctx.progress()
                          .relay(
                              agent
                                  + " is answering a call of this conversation on another replica"
                                  + " first; waiting",
                              false);
                    })) {
              wait.end();
              metrics.queueWait(agent, Duration.ofNanos(System.nanoTime() - queued));
              call.startDeadline(deadline);
              TurnResult r = loop.run(histories.read(conversation), user, ctx);
              if (!call.finish()) {
                return null; // a stopped turn is no turn: the history holds no half of it
              }
              if (r.ok()) {
                histories.append(conversation, caller == null ? null : caller.name(), r.messages());
              }
              return r;
            } catch (StoreException e) {
              String message = storeFailed(e);
              LOG.info("{}", message);
              return call.finish() ? TurnResult.error(message) : null;
            } catch (TurnSlot.Stopped e) {
              return null;
            }
          });
    } catch (TurnSlot.Stopped e) {
      return null;
    } finally {
      wait.end(); // a call that stopped while it waited
      conversations.leave(conversation);
    }
  }

  /** The error of a call whose conversation's store failed: the turn was not kept. */
  private String storeFailed(StoreException e) {
    return "agent '"
        + agent
        + "' cannot use its conversation history now: "
        + e.getMessage()
        + "; this turn was not kept and the conversation is unchanged, retry later";
  }

  /** The error of a call whose turn passed its deadline, naming the model and the deadline. */
  private String deadlinePassed(Cancellation call) {
    String model = loop.model().provider() + "." + loop.model().modelName();
    String waiting = call.waitingFor();
    return "agent '"
        + agent
        + "' did not finish within the turn's deadline of "
        + seconds(call.deadline())
        + ": it was waiting for "
        + waiting
        + (waiting.startsWith("the model ") ? "" : " (model " + model + ")");
  }

  private static String seconds(Duration d) {
    long millis = d == null ? 0 : d.toMillis();
    if (millis < 1000) {
      return millis + " ms";
    }
    return millis % 1000 == 0
        ? millis / 1000 + " s"
        : String.format(Locale.ROOT, "%.1f s", millis / 1000.0);
  }

  /**
   * Eight hex digits naming the call in logs and errors, as the start of a random UUID did, without
   * the SecureRandom a UUID costs on every call: it is a label, not a secret.
   */
  static String requestId() {
    return HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt());
  }

  static Optional<String> bearer(McpAsyncServerExchange exchange) {
    Object auth = exchange.transportContext().get(AUTHORIZATION);
    if (auth instanceof String header && header.regionMatches(true, 0, "Bearer ", 0, 7)) {
      String token = header.substring(7).strip();
      return token.isEmpty() ? Optional.empty() : Optional.of(token);
    }
    return Optional.empty();
  }

  private static McpSchema.CallToolResult error(String message) {
    return McpSchema.CallToolResult.builder().addTextContent(message).isError(true).build();
  }
}
