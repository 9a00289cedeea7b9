package ca.helu.pallas.runtime.store;

import java.util.List;
import java.util.Optional;

/**
 * The events of resumable SSE streams (MCP 2025-11-25, "Resumability and Redelivery";
 * docs/runtime.md, "Sessions"): what a response stream sent, kept so that a client whose connection
 * broke can ask for what it missed with {@code Last-Event-ID}, on any replica. Storage-neutral:
 * ids, numbers and the JSON-RPC messages as JSON text, so that it maps onto one table. Bounded in
 * bytes and time by the implementation.
 */
public interface EventStore {
  /**
   * One event of a stream.
   *
   * @param seq its number in the stream, from 1 (0 is the priming event, which is not kept)
   * @param message the JSON-RPC message it carried, as JSON
   * @param last whether it ends the stream (the response to the stream's request)
   */
  record Event(long seq, String message, boolean last) {}

  /** Keeps an event of a session's stream. */
  void append(String agent, String session, String stream, Event event);

  /**
   * The stream's events after {@code seq}, in order; empty when the stream is not kept (never was,
   * ended long ago, or pushed out by the bound).
   */
  Optional<List<Event>> after(String agent, String session, String stream, long seq);

  /** Forgets the streams of a session that ended. */
  void forget(String agent, String session);

  /**
   * Keeps the request that opened a stream, as run by this replica, so that another replica may run
   * it again if this one dies before the stream's end ({@link #adopt}). A store that only this
   * process reads keeps nothing: it dies with the turn.
   */
  default void started(String agent, String session, String stream, String request) {}

  /**
   * A stream whose replica stopped before the stream's end, its request taken over by this replica
   * (no other takes it too); empty when the stream ended, its replica is still alive, another
   * replica took it first, or the store keeps no requests.
   */
  default Optional<Orphan> adopt(String agent, String session, String stream) {
    return Optional.empty();
  }

  /**
   * A stream taken over.
   *
   * @param request the JSON-RPC request that opened it
   * @param lastSeq the number of its last event kept
   */
  record Orphan(String request, long lastSeq) {}
}
