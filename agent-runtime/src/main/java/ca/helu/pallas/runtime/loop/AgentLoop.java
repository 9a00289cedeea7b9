package ca.helu.pallas.runtime.loop;

import ca.helu.pallas.api.RequestParams;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.agent.tool.ToolSpecification;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.SystemMessage;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.ChatResponse;
import io.opentelemetry.context.Context;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * One agent's loop: system instruction + history + the user's message, then LLM turns and tool
 * calls until the model answers without tools or {@code maxIterations} is reached. A failing tool
 * becomes a failed tool result the model sees; a failing LLM ends the turn with a clear error.
 */
public final class AgentLoop {
  private static final Logger LOG = LoggerFactory.getLogger(AgentLoop.class);
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final int MAX_LOGGED_REASON = 500;

  private final String agent;
  private final String instruction;
  private final ModelClient model;
  private final List<ToolServer> servers;
  private final RequestParams params;
  private final LoopMetrics metrics;
  private final Function<ExposedTool, ToolSpecification> toSpecification;

  public AgentLoop(
      String agent,
      String instruction,
      ModelClient model,
      List<ToolServer> servers,
      RequestParams params,
      LoopMetrics metrics,
      Function<ExposedTool, ToolSpecification> toSpecification) {
    this.agent = agent;
    this.instruction = instruction;
    this.model = model;
    this.servers = List.copyOf(servers);
    this.params = params;
    this.metrics = metrics;
    this.toSpecification = toSpecification;
  }

  public String agent() {
    return agent;
  }

  public ModelClient model() {
    return model;
  }

  /** Runs one turn on top of {@code history}; the caller decides whether to keep its messages. */
  public TurnResult run(List<ChatMessage> history, UserMessage user, CallContext ctx) {
    ToolIndex tools = ToolIndex.collect(servers, toSpecification);
    List<ChatMessage> turn = new ArrayList<>();
    turn.add(user);
    int step = 0;
    int maxIterations = params.effectiveMaxIterations();
    Cancellation stop = ctx.cancellation();
    for (int iteration = 0; iteration < maxIterations; iteration++) {
      if (stop.stopped()) {
        // its caller has its answer (or none) already: nothing more is asked of anyone
        return TurnResult.error("the call stopped: " + stop.reason().words());
      }
      ctx.progress().step(++step, "llm");
      List<ChatMessage> messages = new ArrayList<>(history.size() + turn.size() + 1);
      if (instruction != null && !instruction.isBlank()) {
        messages.add(SystemMessage.from(instruction));
      }
      if (params.effectiveUseHistory()) {
        messages.addAll(history);
      }
      messages.addAll(turn);
      ChatRequest.Builder request = ChatRequest.builder().messages(messages);
      List<ToolSpecification> specs = tools.specifications();
      if (!specs.isEmpty()) {
        request.toolSpecifications(specs);
      }
      ChatResponse response;
      stop.waitingFor("the model " + model.provider() + "." + model.modelName());
      try {
        // a client that follows the call's progress gets the answer streamed (docs/runtime.md,
        // "Streamed answers"); without a progressToken the request is the one it always was
        response =
            ctx.progress() == Progress.NONE
                ? model.chat(request.build(), stop)
                : model.chat(request.build(), stop, ctx.progress()::text);
      } catch (RuntimeException e) {
        ctx.progress().flush(); // the text seen before the failure, then the error
        if (stop.stopped()) {
          LOG.debug("LLM request of request {} abandoned: {}", ctx.requestId(), stop.reason());
          return TurnResult.error("the call stopped: " + stop.reason().words());
        }
        LOG.warn("LLM turn failed for request {}: {}", ctx.requestId(), e.getMessage());
        return TurnResult.error(
            "The model "
                + model.provider()
                + "."
                + model.modelName()
                + " failed: "
                + e.getMessage());
      }
      ctx.progress().flush(); // the answer's last text before the result or the next step
      Map<String, Long> tokens = model.tokensByKind(response);
      metrics.llmTurn(agent, model.modelName(), tokens);
      ctx.tokens().add(tokens);
      AiMessage ai = response.aiMessage();
      turn.add(ai);
      if (!ai.hasToolExecutionRequests()) {
        return TurnResult.ok(ai.text() == null ? "" : ai.text(), turn);
      }
      ctx.progress().step(++step, "tool");
      stop.waitingFor(toolCalls(ai.toolExecutionRequests(), tools));
      turn.addAll(execute(ai.toolExecutionRequests(), tools, ctx));
    }
    return TurnResult.error(
        "The agent stopped after maxIterations ("
            + maxIterations
            + ") LLM turns without a final answer");
  }

  /**
   * The tool calls a turn waits for, in words for a deadline's error: the servers' names for their
   * tools (never a name the model made up, which could be anything), at most three of them.
   */
  static String toolCalls(List<ToolExecutionRequest> requests, ToolIndex tools) {
    List<String> names =
        requests.stream()
            .map(r -> {
              ToolIndex.Entry entry = tools.find(r.name());
              return entry == null ? "an unknown tool" : entry.server().name() + "/" + entry.tool();
            })
            .distinct()
            .toList();
    String shown = String.join(", ", names.subList(0, Math.min(3, names.size())));
    return (names.size() == 1 ? "the tool call " : "the tool calls ")
        + shown
        + (names.size() > 3 ? " and " + (names.size() - 3) + " more" : "");
  }

  private List<ToolExecutionResultMessage> execute(
      List<ToolExecutionRequest> requests, ToolIndex tools, CallContext ctx) {
    int workers = Math.min(requests.size(), params.effectiveMaxParallelToolCalls());
    if (workers == 1 || !params.effectiveParallelToolCalls()) {
      List<ToolExecutionResultMessage> results = new ArrayList<>();
      for (ToolExecutionRequest r : requests) {
        results.add(executeOne(r, tools, ctx));
      }
      return results;
    }
    // at most maxParallelToolCalls of the answer's calls in flight (docs/runtime.md, Limits): that
    // many virtual threads take the calls in order, so the rest wait as list entries, not threads
    ToolExecutionResultMessage[] results = new ToolExecutionResultMessage[requests.size()];
    AtomicInteger next = new AtomicInteger();
    // the workers log as the turn's thread does: its agent, request, caller and trace ids
    Map<String, String> logContext = MDC.getCopyOfContextMap();
    try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
      for (int w = 0; w < workers; w++) {
        // each worker in the turn's trace context: the tool calls' spans are the turn's children
        pool.submit(
            Context.current()
                .wrap(() -> {
                  if (logContext != null) {
                    MDC.setContextMap(logContext);
                  }
                  // a call that stops starts none of its tool calls not yet started
                  for (int i = next.getAndIncrement();
                      i < results.length && !ctx.cancellation().stopped();
                      i = next.getAndIncrement()) {
                    results[i] = executeOne(requests.get(i), tools, ctx);
                  }
                }));
      }
    }
    List<ToolExecutionResultMessage> answered = new ArrayList<>(results.length);
    for (int i = 0; i < results.length; i++) {
      answered.add(
          results[i] != null
              ? results[i]
              : ToolExecutionResultMessage.from(
                  requests.get(i), "Error: the tool call was interrupted"));
    }
    return answered;
  }

  private ToolExecutionResultMessage executeOne(
      ToolExecutionRequest request, ToolIndex tools, CallContext ctx) {
    ToolIndex.Entry entry = tools.find(request.name());
    if (entry == null) {
      return ToolExecutionResultMessage.from(
          request, "Error: unknown tool '" + request.name() + "'");
    }
    String server = entry.server().name();
    Map<String, Object> arguments;
    try {
      String raw = request.arguments();
      arguments =
          raw == null || raw.isBlank()
              ? Map.of()
              : JSON.readValue(raw, new TypeReference<Map<String, Object>>() {});
    } catch (Exception e) {
      return ToolExecutionResultMessage.from(
          request, "Error: the arguments for " + request.name() + " are not a JSON object");
    }
    ctx.progress().toolStarted(server, entry.tool());
    long start = System.nanoTime();
    ToolResult result;
    try {
      result = entry.server().call(entry.tool(), arguments, ctx);
    } catch (RuntimeException e) {
      result = ToolResult.failed(e.getMessage() == null ? e.toString() : e.getMessage());
    }
    Duration took = Duration.ofNanos(System.nanoTime() - start);
    metrics.toolCall(agent, server, result.ok(), took);
    ctx.progress().toolFinished(server, entry.tool(), result.ok());
    if (!result.ok()) {
      // a tool's own error text can be as long as the server likes: the log gets its start
      String text = result.text();
      LOG.info(
          "tool {}/{} failed for request {}: {}",
          server,
          entry.tool(),
          ctx.requestId(),
          text.length() <= MAX_LOGGED_REASON ? text : text.substring(0, MAX_LOGGED_REASON) + "…");
      return ToolExecutionResultMessage.from(
          request, "Error: " + server + "/" + entry.tool() + " failed: " + result.text());
    }
    return ToolExecutionResultMessage.from(request, result.text());
  }
}
