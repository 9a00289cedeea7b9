package ca.helu.pallas.runtime.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.ImageContent;
import dev.langchain4j.data.message.SystemMessage;
import dev.langchain4j.data.message.TextContent;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.data.message.UserMessage;
import io.modelcontextprotocol.spec.McpSchema;
import java.net.URI;
import java.util.List;
import org.junit.jupiter.api.Test;

/** send_message's arguments to LangChain4j, and a conversation to the history prompt's messages. */
class McpMessagesTest {
  private static final String PNG = "iVBORw0KGgo=";
  private static final String JPEG = "/9j/4AAQ";

  @Test
  void aMessageWithoutImagesIsPlainText() {
    UserMessage user = McpMessages.userMessage(new SendMessageArgs("hello", List.of()));
    assertThat(user.hasSingleText()).isTrue();
    assertThat(user.singleText()).isEqualTo("hello");
  }

  @Test
  void imagesFollowTheTextInTheOrderSent() {
    UserMessage user =
        McpMessages.userMessage(
            new SendMessageArgs(
                "what is this?",
                List.of(
                    new SendMessageArgs.Image(PNG, "image/png"),
                    new SendMessageArgs.Image(JPEG, "image/jpeg"))));
    assertThat(user.contents()).hasSize(3);
    assertThat(user.contents().get(0)).isEqualTo(TextContent.from("what is this?"));
    ImageContent first = (ImageContent) user.contents().get(1);
    assertThat(first.image().base64Data()).isEqualTo(PNG);
    assertThat(first.image().mimeType()).isEqualTo("image/png");
    ImageContent second = (ImageContent) user.contents().get(2);
    assertThat(second.image().base64Data()).isEqualTo(JPEG);
    assertThat(second.image().mimeType()).isEqualTo("image/jpeg");
  }

  @Test
  void theHistoryShowsUserTextAndImagesAndTheAssistantsAnswers() {
    List<ChatMessage> conversation =
        List.of(
            McpMessages.userMessage(
                new SendMessageArgs("look", List.of(new SendMessageArgs.Image(PNG, "image/png")))),
            AiMessage.from("a cat"),
            UserMessage.from("thanks"),
            AiMessage.from("you are welcome"));
    List<McpSchema.PromptMessage> prompt = McpMessages.promptMessages(conversation);
    assertThat(prompt)
        .containsExactly(
            new McpSchema.PromptMessage(McpSchema.Role.USER, new McpSchema.TextContent("look")),
            new McpSchema.PromptMessage(
                McpSchema.Role.USER, new McpSchema.ImageContent(null, PNG, "image/png")),
            new McpSchema.PromptMessage(
                McpSchema.Role.ASSISTANT, new McpSchema.TextContent("a cat")),
            new McpSchema.PromptMessage(McpSchema.Role.USER, new McpSchema.TextContent("thanks")),
            new McpSchema.PromptMessage(
                McpSchema.Role.ASSISTANT, new McpSchema.TextContent("you are welcome")));
  }

  @Test
  void toolTrafficSystemMessagesAndImagesByUrlStayOut() {
    ToolExecutionRequest call =
        ToolExecutionRequest.builder().id("1").name("t__echo").arguments("{}").build();
    List<ChatMessage> conversation =
        List.of(
            SystemMessage.from("be brief"),
            UserMessage.from(
                TextContent.from("see"), ImageContent.from(URI.create("https://x.test/a.png"))),
            AiMessage.from(call),
            ToolExecutionResultMessage.from(call, "echoed"),
            AiMessage.from("done"));
    assertThat(McpMessages.promptMessages(conversation))
        .containsExactly(
            new McpSchema.PromptMessage(McpSchema.Role.USER, new McpSchema.TextContent("see")),
            new McpSchema.PromptMessage(
                McpSchema.Role.ASSISTANT, new McpSchema.TextContent("done")));
  }

  @Test
  void anEmptyConversationHasNoMessages() {
    assertThat(McpMessages.promptMessages(List.of())).isEmpty();
  }
}
