package ca.helu.pallas.runtime.mcp;

import ca.helu.pallas.api.InstanceScope;
import ca.helu.pallas.runtime.loop.AgentLoop;
import ca.helu.pallas.runtime.loop.CallContext;
import ca.helu.pallas.runtime.loop.Conversation;
import ca.helu.pallas.runtime.loop.TurnResult;
import ca.helu.pallas.runtime.metrics.PallasMetrics;
import dev.langchain4j.data.message.UserMessage;
import io.modelcontextprotocol.server.McpAsyncServerExchange;
import io.modelcontextprotocol.spec.McpSchema;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * One send_message call (docs/runtime.md, "Conversations and concurrency"): refused while the agent
 * drains, its arguments checked, queued behind earlier calls of its conversation, the agent loop
 * run with the caller's bearer and progress, and the answer or the failure returned as a tool
 * result. A call still queued or running at the drain deadline is answered, never cut off.
 */
final class TurnHandler {
  private static final Logger LOG = LoggerFactory.getLogger(TurnHandler.class);

  /** Where a call's turn runs: virtual threads, so a slow LLM never holds an I/O thread. */
  private static final Scheduler CALLS =
      Schedulers.fromExecutorService(Executors.newVirtualThreadPerTaskExecutor(), "pallas-calls");

  /** The transport context's key for the caller's Authorization header. */
  static final String AUTHORIZATION = "authorization";

  private final String agent;
  private final AgentLoop loop;
  private final boolean vision;
  private final int maxMessageChars;
  private final InstanceScope scope;
  private final Conversations conversations;
  private final PallasMetrics metrics;
  private final InFlight inFlight;

  TurnHandler(
      AgentCard card,
      AgentLoop loop,
      InstanceScope scope,
      Conversations conversations,
      PallasMetrics metrics,
      InFlight inFlight) {
    this.agent = card.name();
    this.loop = loop;
    this.vision = card.capabilities().vision();
    // a message the model could read in full
    this.maxMessageChars =
        (int) Math.min(SendMessageArgs.MAX_MESSAGE_CHARS, card.capabilities().contextChars());
    this.scope = scope;
    this.conversations = conversations;
    this.metrics = metrics;
    this.inFlight = inFlight;
  }

  /** The answer to one call of send_message or of the tool named after the agent. */
  Mono<McpSchema.CallToolResult> handle(
      McpAsyncServerExchange exchange, McpSchema.CallToolRequest request) {
    Mono<McpSchema.CallToolResult> turn =
        Mono.fromCallable(() -> run(exchange, request)).subscribeOn(CALLS);
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
    return Mono.firstWithSignal(turn, shutdown);
  }

  private McpSchema.CallToolResult run(
      McpAsyncServerExchange exchange, McpSchema.CallToolRequest request) {
    long start = System.nanoTime();
    String requestId = requestId();
    MDC.put("agent", agent);
    MDC.put("request_id", requestId);
    boolean ok = false;
    if (!inFlight.enter()) {
      metrics.sendMessage(agent, false, Duration.ofNanos(System.nanoTime() - start));
      MDC.clear();
      return error("agent '" + agent + "' is shutting down; retry on another replica");
    }
    try {
      SendMessageArgs args;
      try {
        args = SendMessageArgs.parse(request.arguments(), vision, agent, maxMessageChars);
      } catch (SendMessageArgs.InvalidArguments e) {
        return error("invalid arguments: " + e.getMessage());
      }
      CallContext ctx =
          new CallContext(
              requestId,
              bearer(exchange),
              McpProgress.forCall(exchange, request.progressToken(), agent));
      TurnResult result = turn(exchange, McpMessages.userMessage(args), ctx);
      ok = result.ok();
      return ok
          ? McpSchema.CallToolResult.builder().addTextContent(result.text()).isError(false).build()
          : error(result.text());
    } catch (RuntimeException e) {
      LOG.error("send_message failed", e);
      return error("internal error in agent '" + agent + "' (request " + requestId + ")");
    } finally {
      metrics.sendMessage(agent, ok, Duration.ofNanos(System.nanoTime() - start));
      inFlight.exit();
      MDC.clear();
    }
  }

  /** The agent loop on the conversation's history, one turn at a time per conversation. */
  private TurnResult turn(McpAsyncServerExchange exchange, UserMessage user, CallContext ctx) {
    if (scope == InstanceScope.REQUEST) {
      return loop.run(List.of(), user, ctx);
    }
    Conversation conversation = conversations.forCall(exchange.sessionId());
    int ahead = conversation.waiting();
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
    return conversation.exclusive(() -> {
      metrics.queueWait(agent, Duration.ofNanos(System.nanoTime() - queued));
      TurnResult r = loop.run(conversation.snapshot(), user, ctx);
      if (r.ok()) {
        conversations.appended(
            exchange.sessionId(), conversation, conversation.append(r.messages()));
      }
      return r;
    });
  }

  /**
   * Eight hex digits naming the call in logs and errors, as the start of a random UUID did, without
   * the SecureRandom a UUID costs on every call: it is a label, not a secret.
   */
  static String requestId() {
    return HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt());
  }

  private static Optional<String> bearer(McpAsyncServerExchange exchange) {
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
