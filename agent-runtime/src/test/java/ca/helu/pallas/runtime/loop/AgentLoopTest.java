package ca.helu.pallas.runtime.loop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.api.RequestParams;
import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.agent.tool.ToolSpecification;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.ChatResponse;
import io.modelcontextprotocol.spec.McpSchema;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.Executor;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** The agent loop against a scripted model and an in-memory tool server. */
class AgentLoopTest {
  /** Answers from a script and keeps every request. */
  static final class ScriptedModel implements ModelClient {
    final Deque<AiMessage> script = new ArrayDeque<>();
    final List<ChatRequest> requests = new CopyOnWriteArrayList<>();
    AiMessage otherwise;

    @Override
    public String provider() {
      return "openai";
    }

    @Override
    public String modelName() {
      return "scripted";
    }

    @Override
    public ChatResponse chat(ChatRequest request) {
      requests.add(request);
      AiMessage next = script.isEmpty() ? otherwise : script.poll();
      return ChatResponse.builder().aiMessage(next).build();
    }
  }

  /**
   * Server "t": "meet" waits for a second concurrent call, "count" records its thread, "gate" waits
   * for a permit of {@link #gate} and counts the calls in it at once.
   */
  static final class Tools implements ToolServer {
    final CyclicBarrier meet = new CyclicBarrier(2);
    final List<Thread> countedOn = new CopyOnWriteArrayList<>();
    final Semaphore gate = new Semaphore(0);
    final AtomicInteger atGate = new AtomicInteger();
    final AtomicInteger mostAtGate = new AtomicInteger();

    @Override
    public String name() {
      return "t";
    }

    @Override
    public List<McpSchema.Tool> tools() {
      return List.of(tool("meet"), tool("count"), tool("boom"), tool("gate"));
    }

    private static McpSchema.Tool tool(String name) {
      return McpSchema.Tool.builder()
          .name(name)
          .inputSchema(new McpSchema.JsonSchema("object", Map.of(), List.of(), null, null, null))
          .build();
    }

    @Override
    public ToolResult call(String tool, Map<String, Object> arguments, CallContext context) {
      return switch (tool) {
        case "meet" -> {
          try {
            meet.await(5, TimeUnit.SECONDS);
            yield ToolResult.ok("met");
          } catch (InterruptedException | BrokenBarrierException | TimeoutException e) {
            yield ToolResult.failed("alone");
          }
        }
        case "count" -> {
          countedOn.add(Thread.currentThread());
          yield ToolResult.ok("counted");
        }
        case "gate" -> {
          mostAtGate.accumulateAndGet(atGate.incrementAndGet(), Math::max);
          try {
            gate.acquire();
            yield ToolResult.ok("passed");
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            yield ToolResult.failed("interrupted");
          } finally {
            atGate.decrementAndGet();
          }
        }
        default -> ToolResult.failed("it broke");
      };
    }
  }

  private static final Executor VIRTUAL = task -> Thread.ofVirtual().start(task);

  /** What the loop reported: "llm model" per round-trip, "server ok|failed" per tool call. */
  private static final class Reported implements LoopMetrics {
    final List<String> events = new CopyOnWriteArrayList<>();

    @Override
    public void llmTurn(String agent, String model, Map<String, Long> tokensByKind) {
      events.add("llm " + model);
    }

    @Override
    public void toolCall(String agent, String server, boolean ok, Duration took) {
      events.add(server + (ok ? " ok" : " failed"));
    }
  }

  private final ScriptedModel model = new ScriptedModel();
  private final Tools tools = new Tools();
  private final Reported reported = new Reported();

  private AgentLoop loop(Integer maxIterations, Boolean parallel) {
    return loop(maxIterations, parallel, null);
  }

  private AgentLoop loop(Integer maxIterations, Boolean parallel, Integer maxParallel) {
    return new AgentLoop(
        "a",
        "be brief",
        model,
        List.of(tools),
        new RequestParams(null, null, null, null, maxIterations, parallel, maxParallel, null),
        reported,
        exposed -> ToolSpecification.builder().name(exposed.exposedName()).build());
  }

  private static AiMessage calls(String... tools) {
    List<ToolExecutionRequest> requests =
        IntStream.range(0, tools.length)
            .mapToObj(i ->
                ToolExecutionRequest.builder().id("c" + i).name(tools[i]).arguments("{}").build())
            .toList();
    return AiMessage.from(requests);
  }

  private TurnResult run(AgentLoop loop) {
    return loop.run(List.of(), UserMessage.from("go"), CallContext.anonymous("r"));
  }

  @Test
  void toolCallsOfOneTurnRunInParallel() {
    model.script.add(calls("t__meet", "t__meet"));
    model.script.add(AiMessage.from("done"));
    TurnResult result = run(loop(null, null));
    assertThat(result.ok()).isTrue();
    assertThat(result.text()).isEqualTo("done");
    // both calls met at the barrier, which one call alone cannot pass
    assertThat(result.messages())
        .filteredOn(m -> m instanceof ToolExecutionResultMessage)
        .extracting(m -> ((ToolExecutionResultMessage) m).text())
        .containsExactly("met", "met");
    assertThat(model.requests.get(1).toolSpecifications())
        .extracting(ToolSpecification::name)
        .containsExactlyInAnyOrder("t__meet", "t__count", "t__boom", "t__gate");
  }

  @Test
  void oneAnswersToolCallsInFlightAtOnceAreBoundedByMaxParallelToolCalls() throws Exception {
    String[] ten = new String[10];
    Arrays.fill(ten, "t__gate");
    model.script.add(calls(ten));
    model.script.add(AiMessage.from("done"));
    CompletableFuture<TurnResult> turn =
        CompletableFuture.supplyAsync(() -> run(loop(null, null, 3)), VIRTUAL);
    // let the calls through one by one: each time, the bound's worth are at the gate, never more
    for (int passed = 0; passed < 10; passed++) {
      int expected = Math.min(3, 10 - passed);
      await().atMost(Duration.ofSeconds(5)).until(() -> tools.atGate.get() == expected);
      tools.gate.release();
    }
    TurnResult result = turn.get(5, TimeUnit.SECONDS);
    assertThat(result.ok()).isTrue();
    assertThat(tools.mostAtGate.get()).isEqualTo(3);
    assertThat(result.messages())
        .filteredOn(m -> m instanceof ToolExecutionResultMessage)
        .extracting(m -> ((ToolExecutionResultMessage) m).text())
        .hasSize(10)
        .containsOnly("passed");
  }

  @Test
  void theDefaultBoundLetsSixteenCallsOfOneAnswerRunAtOnce() throws Exception {
    String[] twenty = new String[20];
    Arrays.fill(twenty, "t__gate");
    model.script.add(calls(twenty));
    model.script.add(AiMessage.from("done"));
    CompletableFuture<TurnResult> turn =
        CompletableFuture.supplyAsync(() -> run(loop(null, null)), VIRTUAL);
    await()
        .atMost(Duration.ofSeconds(5))
        .until(() -> tools.atGate.get() == RequestParams.DEFAULT_MAX_PARALLEL_TOOL_CALLS);
    tools.gate.release(20);
    assertThat(turn.get(5, TimeUnit.SECONDS).ok()).isTrue();
    assertThat(tools.mostAtGate.get()).isEqualTo(16);
  }

  @Test
  void withParallelToolCallsOffTheyRunOneAtATime() {
    model.script.add(calls("t__count", "t__count", "t__count"));
    model.script.add(AiMessage.from("done"));
    assertThat(run(loop(null, false)).ok()).isTrue();
    // serial: every call ran on the caller's own thread, one after another
    assertThat(tools.countedOn).hasSize(3).containsOnly(Thread.currentThread());
  }

  @Test
  void aToolErrorReachesTheModelAndTheTurnGoesOn() {
    model.script.add(calls("t__boom"));
    model.script.add(AiMessage.from("I could not"));
    TurnResult result = run(loop(null, null));
    assertThat(result.ok()).isTrue();
    List<ChatMessage> second = model.requests.get(1).messages();
    assertThat(second.get(second.size() - 1))
        .isInstanceOfSatisfying(
            ToolExecutionResultMessage.class,
            m -> assertThat(m.text()).isEqualTo("Error: t/boom failed: it broke"));
    assertThat(reported.events)
        .containsExactly("llm " + model.modelName(), "t failed", "llm " + model.modelName());
  }

  @Test
  void maxIterationsEndsAModelThatNeverAnswers() {
    model.otherwise = calls("t__count");
    TurnResult result = run(loop(3, null));
    assertThat(result.ok()).isFalse();
    assertThat(result.text()).contains("maxIterations (3)");
    assertThat(model.requests).hasSize(3);
  }
}
