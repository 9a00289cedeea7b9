package ca.helu.pallas.runtime.store;

import ca.helu.pallas.runtime.loop.Cancellation;
import ca.helu.pallas.runtime.loop.TurnSlot;
import dev.langchain4j.data.message.ChatMessage;
import java.util.List;

/**
 * The conversation histories of one agent: what the MCP surface and the turn handler talk to,
 * whichever store holds them. A conversation is named by its session: the MCP session id for {@code
 * instanceScope: connection}, {@code null} for the one conversation of a {@code shared} agent, or
 * with inbound authentication {@code caller:<name>} for each caller's conversation with it
 * (docs/runtime.md, "Inbound authentication").
 */
public interface AgentHistories {
  /** The conversation held for one turn, across every process that shares the store. */
  interface Hold extends AutoCloseable {
    Hold NONE = () -> {};

    /** Lets the next turn of the conversation start. */
    @Override
    void close();
  }

  /**
   * Takes the conversation for one turn across processes (this process's own calls of it are
   * already queued in order by a {@link TurnSlot}); a store of one process returns at once. Tells
   * {@code waitingElsewhere} once when the conversation is busy in another process and the call
   * waits for it. The hold is let go when closed, or when {@code call} stops.
   *
   * @throws TurnSlot.Stopped when the call stopped while it waited
   */
  Hold hold(String session, Cancellation call, Runnable waitingElsewhere)
      throws StoreException, TurnSlot.Stopped;

  /** The conversation's messages, oldest first; empty when it has none (or they expired). */
  List<ChatMessage> read(String session) throws StoreException;

  /**
   * Adds one turn's messages at once (never a part of them), then drops the oldest whole turns past
   * the conversation's bound.
   *
   * @param caller who made the turn (the authenticated caller's name), or null without inbound
   *     authentication
   */
  void append(String session, String caller, List<ChatMessage> turn) throws StoreException;

  /** Deletes a session's history: its client deleted the session (docs/runtime.md, "Sessions"). */
  void delete(String session) throws StoreException;

  /**
   * This process closed the session (idle, or making room for another): a memory store frees its
   * history; a durable one keeps it for its time to live, as another replica may serve the session.
   */
  void closed(String session);

  /** Conversations this process holds in memory, for pallas_history_sessions. */
  int held();

  /** Characters of message content this process holds in memory, for pallas_history_bytes. */
  long chars();
}
