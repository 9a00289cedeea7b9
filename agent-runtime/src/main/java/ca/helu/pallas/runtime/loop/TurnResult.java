package ca.helu.pallas.runtime.loop;

import dev.langchain4j.data.message.ChatMessage;
import java.util.List;

/** The outcome of one agent turn: the final text (or error) and the messages it added. */
public record TurnResult(boolean ok, String text, List<ChatMessage> messages) {
  public static TurnResult ok(String text, List<ChatMessage> messages) {
    return new TurnResult(true, text, List.copyOf(messages));
  }

  public static TurnResult error(String message) {
    return new TurnResult(false, message, List.of());
  }
}
