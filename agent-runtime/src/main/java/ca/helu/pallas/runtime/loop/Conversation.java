package ca.helu.pallas.runtime.loop;

import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.Content;
import dev.langchain4j.data.message.ImageContent;
import dev.langchain4j.data.message.SystemMessage;
import dev.langchain4j.data.message.TextContent;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.data.message.UserMessage;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * One conversation history. Turns on the same history run one after another (fairly), so concurrent
 * calls on a shared agent never interleave or corrupt it. It never holds more than its budget of
 * characters (docs/runtime.md, "Conversations and concurrency"): past it the oldest whole turns are
 * dropped, since a model could not read them anyway.
 */
public final class Conversation {
  private final ReentrantLock lock = new ReentrantLock(true);
  private final Deque<Turn> turns = new ArrayDeque<>();
  private final long budgetChars;
  private volatile long chars;

  private record Turn(List<ChatMessage> messages, long chars) {}

  /** A history of at most {@code budgetChars} characters of message content. */
  public Conversation(long budgetChars) {
    this.budgetChars = budgetChars;
  }

  /** Runs {@code turn} with this history to itself. */
  public <T> T exclusive(Supplier<T> turn) {
    lock.lock();
    try {
      return turn.get();
    } finally {
      lock.unlock();
    }
  }

  public List<ChatMessage> snapshot() {
    lock.lock();
    try {
      List<ChatMessage> all = new ArrayList<>();
      turns.forEach(t -> all.addAll(t.messages()));
      return List.copyOf(all);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Adds a turn's messages, then drops the oldest turns while the history is over its budget (a
   * turn bigger than the whole budget is not kept). Returns the change in characters held.
   */
  public long append(List<ChatMessage> turn) {
    lock.lock();
    try {
      long before = chars;
      long size = turn.stream().mapToLong(Conversation::chars).sum();
      turns.addLast(new Turn(List.copyOf(turn), size));
      long held = before + size;
      while (held > budgetChars && !turns.isEmpty()) {
        held -= turns.removeFirst().chars();
      }
      chars = held;
      return held - before;
    } finally {
      lock.unlock();
    }
  }

  /** Calls ahead of a new one: the one running and those queued. */
  public int waiting() {
    return (lock.isLocked() ? 1 : 0) + lock.getQueueLength();
  }

  /** Characters of message content held now. */
  public long chars() {
    return chars;
  }

  /** Characters a message holds: its text, tool arguments and results, and images as base64. */
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
