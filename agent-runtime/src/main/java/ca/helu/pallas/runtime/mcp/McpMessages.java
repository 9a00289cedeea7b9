package ca.helu.pallas.runtime.mcp;

import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.Content;
import dev.langchain4j.data.message.ImageContent;
import dev.langchain4j.data.message.TextContent;
import dev.langchain4j.data.message.UserMessage;
import io.modelcontextprotocol.spec.McpSchema;
import java.util.ArrayList;
import java.util.List;

/**
 * Messages between MCP and LangChain4j: send_message's arguments become the user's chat message,
 * and a conversation becomes the messages of the {agent}_history prompt.
 */
final class McpMessages {
  private McpMessages() {}

  /** The user's message of one call: its text alone, or its text then its images in order. */
  static UserMessage userMessage(SendMessageArgs args) {
    if (args.images().isEmpty()) {
      return UserMessage.from(args.message());
    }
    List<Content> parts = new ArrayList<>();
    parts.add(TextContent.from(args.message()));
    for (SendMessageArgs.Image image : args.images()) {
      parts.add(ImageContent.from(image.base64(), image.mimeType()));
    }
    return UserMessage.from(parts);
  }

  /**
   * A conversation as prompt messages: the user's text and images, the assistant's text answers.
   * Tool traffic stays internal, and so do system messages and images known only by URL.
   */
  static List<McpSchema.PromptMessage> promptMessages(List<ChatMessage> conversation) {
    List<McpSchema.PromptMessage> out = new ArrayList<>();
    for (ChatMessage message : conversation) {
      if (message instanceof UserMessage user) {
        for (Content part : user.contents()) {
          if (part instanceof TextContent text) {
            out.add(
                new McpSchema.PromptMessage(
                    McpSchema.Role.USER, new McpSchema.TextContent(text.text())));
          } else if (part instanceof ImageContent image && image.image().base64Data() != null) {
            out.add(
                new McpSchema.PromptMessage(
                    McpSchema.Role.USER,
                    new McpSchema.ImageContent(
                        null, image.image().base64Data(), image.image().mimeType())));
          }
        }
      } else if (message instanceof AiMessage ai
          && !ai.hasToolExecutionRequests()
          && ai.text() != null) {
        out.add(
            new McpSchema.PromptMessage(
                McpSchema.Role.ASSISTANT, new McpSchema.TextContent(ai.text())));
      }
    }
    return out;
  }
}
