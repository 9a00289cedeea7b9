package ca.helu.pallas.runtime.loop;

import static org.assertj.core.api.Assertions.assertThat;

import ca.helu.pallas.api.RequestParams;
import ca.helu.pallas.runtime.metrics.PallasMetrics;
import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.agent.tool.ToolSpecification;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.ChatResponse;
import io.modelcontextprotocol.spec.McpSchema;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
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

  /** Server "t": "meet" waits for a second concurrent call, "count" records its thread. */
  static final class Tools implements ToolServer {
    final CyclicBarrier meet = new CyclicBarrier(2);
    final List<Thread> countedOn = new CopyOnWriteArrayList<>();

    @Override
    public String name() {
      return "t";
    }

    @Override
    public List<McpSchema.Tool> tools() {
      return List.of(tool("meet"), tool("count"), tool("boom"));
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
        default -> ToolResult.failed("it broke");
      };
    }
  }

  private final ScriptedModel model = new ScriptedModel();
  private final Tools tools = new Tools();

  private AgentLoop loop(Integer maxIterations, Boolean parallel) {
    return new AgentLoop(
        "a",
        "be brief",
        model,
        List.of(tools),
        new RequestParams(null, null, null, null, maxIterations, parallel, null),
        new PallasMetrics(),
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
        .containsExactlyInAnyOrder("t__meet", "t__count", "t__boom");
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
