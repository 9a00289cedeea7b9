package ca.helu.pallas.runtime.llm;

import ca.helu.pallas.api.Models;
import ca.helu.pallas.runtime.loop.ModelClient;
import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.Content;
import dev.langchain4j.data.message.SystemMessage;
import dev.langchain4j.data.message.TextContent;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.output.FinishReason;
import dev.langchain4j.model.output.TokenUsage;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * fast-agent's test models, with no network: {@code passthrough}, {@code playback} and {@code
 * slow}. They make the whole runtime runnable and testable without an API key.
 */
public final class BuiltInModels {
  public static final String FIXED_RESPONSE = "***FIXED_RESPONSE";
  public static final String CALL_TOOL = "***CALL_TOOL";
  public static final String EXHAUSTED = "MESSAGES EXHAUSTED";
  public static final Duration DEFAULT_SLOW_DELAY = Duration.ofSeconds(3);

  private BuiltInModels() {}

  public static ModelClient create(String model, Duration slowDelay) {
    return switch (model) {
      case Models.PASSTHROUGH -> new Passthrough(Models.PASSTHROUGH, Duration.ZERO);
      case Models.SLOW -> new Passthrough(Models.SLOW, slowDelay);
      case Models.PLAYBACK -> new Playback();
      default -> throw new IllegalArgumentException("not a built-in model: " + model);
    };
  }

  /** Echoes the user; understands ***FIXED_RESPONSE and ***CALL_TOOL; answers tool results. */
  static final class Passthrough implements ModelClient {
    private final String name;
    private final Duration delay;

    Passthrough(String name, Duration delay) {
      this.name = name;
      this.delay = delay;
    }

    @Override
    public String provider() {
      return name;
    }

    @Override
    public String modelName() {
      return name;
    }

    @Override
    public ChatResponse chat(ChatRequest request) {
      if (!delay.isZero()) {
        try {
          Thread.sleep(delay);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException("interrupted");
        }
      }
      List<ChatMessage> messages = request.messages();
      ChatMessage last = messages.get(messages.size() - 1);
      if (last instanceof ToolExecutionResultMessage) {
        StringBuilder text = new StringBuilder();
        for (int i = messages.size() - 1;
            i >= 0 && messages.get(i) instanceof ToolExecutionResultMessage r;
            i--) {
          text.insert(0, r.text() + (text.isEmpty() ? "" : "\n"));
        }
        return respond(AiMessage.from(text.toString()), messages);
      }
      String input = last instanceof UserMessage user ? textOf(user) : "";
      if (input.startsWith(FIXED_RESPONSE)) {
        return respond(AiMessage.from(input.substring(FIXED_RESPONSE.length()).strip()), messages);
      }
      if (input.startsWith(CALL_TOOL)) {
        String rest = input.substring(CALL_TOOL.length()).strip();
        int space = rest.indexOf(' ');
        String tool = space < 0 ? rest : rest.substring(0, space);
        String args = space < 0 ? "{}" : rest.substring(space + 1).strip();
        ToolExecutionRequest call =
            ToolExecutionRequest.builder()
                .id("call_" + UUID.randomUUID().toString().substring(0, 8))
                .name(tool)
                .arguments(args.isEmpty() ? "{}" : args)
                .build();
        return respond(AiMessage.from(List.of(call)), messages);
      }
      return respond(AiMessage.from(input), messages);
    }
  }

  /** Replays the ---ASSISTANT sections of the system instruction, one per user turn. */
  static final class Playback implements ModelClient {
    @Override
    public String provider() {
      return Models.PLAYBACK;
    }

    @Override
    public String modelName() {
      return Models.PLAYBACK;
    }

    @Override
    public ChatResponse chat(ChatRequest request) {
      String script = "";
      int userTurns = 0;
      for (ChatMessage m : request.messages()) {
        if (m instanceof SystemMessage s) {
          script = s.text();
        } else if (m instanceof UserMessage) {
          userTurns++;
        }
      }
      List<String> replies = assistantSections(script);
      String reply = userTurns <= replies.size() ? replies.get(userTurns - 1) : EXHAUSTED;
      return respond(AiMessage.from(reply), request.messages());
    }

    static List<String> assistantSections(String script) {
      List<String> replies = new ArrayList<>();
      StringBuilder current = null;
      for (String line : script.split("\n", -1)) {
        String marker = line.strip();
        if (marker.equals("---ASSISTANT")) {
          if (current != null) {
            replies.add(current.toString().strip());
          }
          current = new StringBuilder();
        } else if (marker.startsWith("---")) {
          if (current != null) {
            replies.add(current.toString().strip());
          }
          current = null;
        } else if (current != null) {
          current.append(line).append('\n');
        }
      }
      if (current != null) {
        replies.add(current.toString().strip());
      }
      return replies;
    }
  }

  static String textOf(UserMessage user) {
    StringBuilder text = new StringBuilder();
    for (Content c : user.contents()) {
      if (c instanceof TextContent t) {
        text.append(t.text());
      }
    }
    return text.toString();
  }

  /** Deterministic usage: whitespace-separated words in and out, so token metrics move. */
  private static ChatResponse respond(AiMessage message, List<ChatMessage> input) {
    int in = 0;
    for (ChatMessage m : input) {
      if (m instanceof UserMessage u) {
        in += words(textOf(u));
      } else if (m instanceof SystemMessage s) {
        in += words(s.text());
      } else if (m instanceof ToolExecutionResultMessage r) {
        in += words(r.text());
      }
    }
    int out = words(message.text()) + (message.hasToolExecutionRequests() ? 1 : 0);
    return ChatResponse.builder()
        .aiMessage(message)
        .tokenUsage(new TokenUsage(in, out))
        .finishReason(
            message.hasToolExecutionRequests() ? FinishReason.TOOL_EXECUTION : FinishReason.STOP)
        .build();
  }

  /**
   * How many pieces {@code text.strip().split("\\s+")} would give, without the regex and the array:
   * it ran on every passthrough turn.
   */
  static int words(String text) {
    if (text == null) {
      return 0;
    }
    String t = text.strip();
    int words = 0;
    boolean inWord = false;
    for (int i = 0; i < t.length(); i++) {
      boolean separator = isRegexSpace(t.charAt(i));
      if (!separator && !inWord) {
        words++;
      }
      inWord = !separator;
    }
    return words;
  }

  /** The characters of the regex class \s: space, tab, line feed, \x0B, form feed, return. */
  private static boolean isRegexSpace(char c) {
    return c == ' ' || (c >= '\t' && c <= '\r');
  }
}
