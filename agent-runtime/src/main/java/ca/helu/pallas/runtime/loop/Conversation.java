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
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * One conversation history. Turns on the same history run one after another (fairly), so concurrent
 * calls on a shared agent never interleave or corrupt it. It never holds more than its budget of
 * characters (docs/runtime.md, "Conversations and concurrency"): past it the oldest whole turns are
 * dropped, since a model could not read them anyway.
 *
 * <p>The turn's slot is a fair semaphore, not a lock owned by the turn's thread: a call that stops
 * (cancelled, disconnected, its session deleted, its deadline passed) frees the slot at once, even
 * while its thread is still unwinding, so the call queued behind it starts at once; a stopped turn
 * appends nothing (docs/runtime.md, "Deadlines and cancellation").
 */
public final class Conversation {
  private final Semaphore slot = new Semaphore(1, true);
  private final ReentrantLock history = new ReentrantLock();
  private final Deque<Turn> turns = new ArrayDeque<>();
  private final long budgetChars;
  private volatile long chars;

  private record Turn(List<ChatMessage> messages, long chars) {}

  /** A history of at most {@code budgetChars} characters of message content. */
  public Conversation(long budgetChars) {
    this.budgetChars = budgetChars;
  }

  /** Thrown by {@link #exclusive} when the call stopped while it waited for its turn. */
  public static final class Stopped extends Exception {
    public Stopped() {
      super("the call stopped while it waited for its turn", null, false, false);
    }
  }

  /**
   * Runs {@code turn} with this history to itself, after the turns queued before it; the slot is
   * freed when {@code turn} returns or when {@code call} stops, whichever comes first.
   */
  public <T> T exclusive(Cancellation call, Supplier<T> turn) throws Stopped {
    try {
      slot.acquire(); // a stop interrupts the wait
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new Stopped();
    }
    AtomicBoolean held = new AtomicBoolean(true);
    Runnable free =
        () -> {
          if (held.compareAndSet(true, false)) {
            slot.release();
          }
        };
    Runnable unregister = call.onStop(why -> free.run());
    try {
      return turn.get();
    } finally {
      unregister.run();
      free.run();
    }
  }

  public List<ChatMessage> snapshot() {
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
  public long append(List<ChatMessage> turn) {
    history.lock();
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
      history.unlock();
    }
  }

  /** Calls ahead of a new one: the one running and those queued. */
  public int waiting() {
    return (slot.availablePermits() == 0 ? 1 : 0) + slot.getQueueLength();
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
