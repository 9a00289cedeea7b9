package ca.helu.pallas.runtime.llm;

import static org.assertj.core.api.Assertions.assertThat;

import ca.helu.pallas.runtime.loop.ModelClient;
import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.SystemMessage;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.ChatResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class BuiltInModelsTest {
  private static ChatResponse chat(ModelClient model, ChatMessage... messages) {
    return model.chat(ChatRequest.builder().messages(List.of(messages)).build());
  }

  @Test
  void passthroughEchoesFixesAndCallsTools() {
    ModelClient m = BuiltInModels.create("passthrough", Duration.ZERO);
    assertThat(chat(m, UserMessage.from("hello there")).aiMessage().text())
        .isEqualTo("hello there");
    assertThat(chat(m, UserMessage.from("***FIXED_RESPONSE  exactly this")).aiMessage().text())
        .isEqualTo("exactly this");
    AiMessage call =
        chat(m, UserMessage.from("***CALL_TOOL argos__search {\"q\": \"mcp\"}")).aiMessage();
    assertThat(call.toolExecutionRequests())
        .singleElement()
        .satisfies(r -> {
          assertThat(r.name()).isEqualTo("argos__search");
          assertThat(r.arguments()).isEqualTo("{\"q\": \"mcp\"}");
        });
    ToolExecutionRequest req = call.toolExecutionRequests().get(0);
    ChatResponse after =
        chat(m, UserMessage.from("x"), call, ToolExecutionResultMessage.from(req, "42 results"));
    assertThat(after.aiMessage().text()).isEqualTo("42 results");
    assertThat(m.tokensByKind(after)).containsKeys("input", "output");
  }

  @Test
  void playbackReplaysAssistantSectionsThenSaysExhausted() {
    ModelClient m = BuiltInModels.create("playback", Duration.ZERO);
    SystemMessage script =
        SystemMessage.from(
            "---USER\nhi\n---ASSISTANT\nfirst reply\n---USER\nagain\n---ASSISTANT\nsecond\nline\n");
    List<ChatMessage> conversation = new ArrayList<>(List.of(script, UserMessage.from("a")));
    AiMessage one = chat(m, conversation.toArray(ChatMessage[]::new)).aiMessage();
    assertThat(one.text()).isEqualTo("first reply");
    conversation.addAll(List.of(one, UserMessage.from("b")));
    AiMessage two = chat(m, conversation.toArray(ChatMessage[]::new)).aiMessage();
    assertThat(two.text()).isEqualTo("second\nline");
    conversation.addAll(List.of(two, UserMessage.from("c")));
    assertThat(chat(m, conversation.toArray(ChatMessage[]::new)).aiMessage().text())
        .isEqualTo(BuiltInModels.EXHAUSTED);
  }

  @Test
  void slowWaitsThenPassesThrough() {
    ModelClient m = BuiltInModels.create("slow", Duration.ofMillis(200));
    long start = System.nanoTime();
    assertThat(chat(m, UserMessage.from("later")).aiMessage().text()).isEqualTo("later");
    assertThat((System.nanoTime() - start) / 1_000_000).isGreaterThanOrEqualTo(200);
  }

  @Test
  void passthroughCountsTokensAsWhitespaceSeparatedWords() {
    ModelClient m = BuiltInModels.create("passthrough", Duration.ZERO);
    ChatResponse r =
        chat(m, SystemMessage.from("be  brief"), UserMessage.from(" one two\tthree\n"));

    assertThat(r.tokenUsage().inputTokenCount()).isEqualTo(5);
    assertThat(r.tokenUsage().outputTokenCount()).isEqualTo(3);
  }

  @Test
  void wordsCountsWhatTheRegexSplitCounted() {
    for (String text :
        List.of(
            "",
            "   ",
            "one",
            " one  two ",
            "a\tb\nc\u000Bd\fe\rf",
            "\u2003wide\u2003space\u2003",
            "x\u001Cy",
            "\u001C x y \u001C",
            "trailing\n\n")) {
      int regex = text.isBlank() ? 0 : text.strip().split("\\s+").length;
      assertThat(BuiltInModels.words(text)).as("words in [%s]", text).isEqualTo(regex);
    }
  }
}
