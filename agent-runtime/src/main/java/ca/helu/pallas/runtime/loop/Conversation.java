package ca.helu.pallas.runtime.loop;

import dev.langchain4j.data.message.ChatMessage;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * One conversation history. Turns on the same history run one after another (fairly), so concurrent
 * calls on a shared agent never interleave or corrupt it.
 */
public final class Conversation {
  private final ReentrantLock lock = new ReentrantLock(true);
  private final List<ChatMessage> messages = new ArrayList<>();

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
      return List.copyOf(messages);
    } finally {
      lock.unlock();
    }
  }

  public void append(List<ChatMessage> turn) {
    lock.lock();
    try {
      messages.addAll(turn);
    } finally {
      lock.unlock();
    }
  }
}
