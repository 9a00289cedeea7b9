package ca.helu.pallas.runtime.store;

import dev.langchain4j.data.message.ChatMessage;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One conversation's history in this process's memory. It never holds more than its budget of
 * characters (docs/runtime.md, "Conversations and concurrency"): past it the oldest whole turns are
 * dropped, since a model could not read them anyway.
 */
final class MemoryHistory {
  private final ReentrantLock history = new ReentrantLock();
  private final Deque<Turn> turns = new ArrayDeque<>();
  private final long budgetChars;
  private volatile long chars;

  private record Turn(List<ChatMessage> messages, long chars) {}

  /** A history of at most {@code budgetChars} characters of message content. */
  MemoryHistory(long budgetChars) {
    this.budgetChars = budgetChars;
  }

  List<ChatMessage> snapshot() {
    history.lock();
    try {
      List<ChatMessage> all = new ArrayList<>();
      turns.forEach(t -> all.addAll(t.messages()));
      return List.copyOf(all);
    } finally {
      history.unlock();
    }
  }

  /**
   * Adds a turn's messages, then drops the oldest turns while the history is over its budget (a
   * turn bigger than the whole budget is not kept). Returns the change in characters held.
   */
  long append(List<ChatMessage> turn) {
    history.lock();
    try {
      long before = chars;
      long size = MessageSize.chars(turn);
      turns.addLast(new Turn(List.copyOf(turn), size));
      long held = before + size;
      while (held > budgetChars && !turns.isEmpty()) {
        held -= turns.removeFirst().chars();
      }
      chars = held;
      return held - before;
    } finally {
      history.unlock();
    }
  }

  /** Characters of message content held now. */
  long chars() {
    return chars;
  }
}
