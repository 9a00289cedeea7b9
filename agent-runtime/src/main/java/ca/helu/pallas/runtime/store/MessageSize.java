package ca.helu.pallas.runtime.store;

import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.Content;
import dev.langchain4j.data.message.ImageContent;
import dev.langchain4j.data.message.SystemMessage;
import dev.langchain4j.data.message.TextContent;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.data.message.UserMessage;
import java.util.List;

/**
 * The size of messages as a history's bound counts it (docs/runtime.md, "Conversations and
 * concurrency"): their text, tool arguments and results, and images as base64.
 */
final class MessageSize {
  private MessageSize() {}

  static long chars(List<ChatMessage> messages) {
    return messages.stream().mapToLong(MessageSize::chars).sum();
  }

  static long chars(ChatMessage message) {
    long n = 0;
    if (message instanceof UserMessage user) {
      for (Content part : user.contents()) {
        if (part instanceof TextContent text) {
          n += text.text().length();
        } else if (part instanceof ImageContent image && image.image().base64Data() != null) {
          n += image.image().base64Data().length();
        }
      }
    } else if (message instanceof AiMessage ai) {
      n += ai.text() == null ? 0 : ai.text().length();
      if (ai.hasToolExecutionRequests()) {
        n +=
            ai.toolExecutionRequests().stream()
                .mapToLong(
                    r -> r.name().length() + (r.arguments() == null ? 0 : r.arguments().length()))
                .sum();
      }
    } else if (message instanceof ToolExecutionResultMessage result) {
      n += result.text() == null ? 0 : result.text().length();
    } else if (message instanceof SystemMessage system) {
      n += system.text().length();
    }
    return n;
  }
}
