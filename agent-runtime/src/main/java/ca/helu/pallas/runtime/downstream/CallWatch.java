package ca.helu.pallas.runtime.downstream;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import reactor.core.publisher.Mono;

/**
 * One tools/call as its HTTP exchange sees it: the JSON-RPC id it was sent with, its exchange and
 * answer stream, and how that stream ended.
 *
 * <p>The SDK (2.1.0) routes answers by id over the whole session and is never told when the stream
 * of one POST ends: a stream dropped or ended before the answer leaves the call waiting for its
 * full timeout, and an answer carrying another call's id would complete that other call. The watch,
 * fed by {@link DownstreamHttpClient} and {@link WatchingTransport}, fails this call alone instead,
 * and lets the call stop its own exchange when it gives up, which frees its connection.
 */
final class CallWatch {
  /**
   * How long after its stream ended a call may still complete with its answer: the SDK hands an
   * answer on before the stream's end reaches us, so this only covers scheduling delays.
   */
  static final Duration GRACE = Duration.ofSeconds(1);

  /** An exchange or answer stream the call can stop. */
  interface Stoppable {
    void stop();
  }

  private record End(DownstreamException why, boolean atOnce) {}

  private final CompletableFuture<End> end = new CompletableFuture<>();
  private volatile Object requestId;
  private Stoppable exchange;
  private boolean abandoned;

  /** The id the SDK gave the call's JSON-RPC request. */
  void requestId(Object id) {
    requestId = id;
  }

  /** The id of the call's JSON-RPC request, or null before it is sent. */
  Object requestId() {
    return requestId;
  }

  /** Whether an answer with {@code id}, arriving on this call's stream, is this call's. */
  boolean isOwnAnswer(Object id) {
    Object own = requestId;
    return own == null || Objects.equals(String.valueOf(own), String.valueOf(id));
  }

  /** The call's exchange, first while it waits for headers, then its answer stream. */
  void exchange(Stoppable stoppable) {
    boolean stopNow;
    synchronized (this) {
      exchange = stoppable;
      stopNow = abandoned;
    }
    if (stopNow) {
      stoppable.stop();
    }
  }

  /** The answer stream ended (completed, failed or was cancelled) after its headers. */
  void ended(DownstreamException why) {
    end.complete(new End(why, false));
  }

  /** An answer to another request arrived on this call's stream: the server mixed calls up. */
  void foreignAnswer() {
    end.complete(
        new End(
            new DownstreamException("answered with the result of another request on this call"),
            true));
  }

  /**
   * Errors when the call cannot get its answer any more: at once for a mixed-up answer, {@link
   * #GRACE} after the stream ended otherwise; never when the answer comes first.
   */
  Mono<Void> failure() {
    return Mono.fromFuture(end, true)
        .flatMap(
            e -> e.atOnce() ? Mono.error(e.why()) : Mono.delay(GRACE).then(Mono.error(e.why())));
  }

  /** The call gave up (timed out, or failed by this watch): stop its exchange. */
  void abandon() {
    Stoppable current;
    synchronized (this) {
      abandoned = true;
      current = exchange;
    }
    if (current != null) {
      current.stop();
    }
  }
}
