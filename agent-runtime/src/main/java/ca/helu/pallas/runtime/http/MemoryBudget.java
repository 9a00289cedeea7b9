package ca.helu.pallas.runtime.http;

/**
 * What one process may hold at once, derived from the heap it has (docs/runtime.md, "Memory"), so
 * that every bound at its maximum, all at the same time, still fits: request bodies being read and
 * answered, requests in flight, and conversation histories. An agent pod's heap is 75 % of its
 * memory limit (the image's {@code -XX:MaxRAMPercentage=75}), so a bigger limit raises every bound.
 *
 * <p>The factors are measured (docs/benchmarks.md, "Memory"): a body is held by the edge, parsed by
 * the MCP SDK (its bytes, a string, a map) and sent to the LLM (a data URL, the request's JSON, its
 * bytes); a character of history is held as up to two bytes and becomes part of every LLM request
 * of its conversation's next turn.
 *
 * @param heapBytes the most heap the process may use ({@code Runtime.maxMemory()})
 */
public record MemoryBudget(long heapBytes) {
  /** The largest request body whatever the heap: 10 images of 5 MiB, base64, and a message. */
  public static final long MAX_BODY_BYTES = 80L << 20;

  /** The runtime's own live heap with an agent loaded and no request (measured: about 10 MiB). */
  static final long BASELINE_BYTES = 24L << 20;

  /** Heap one byte of a request body takes at its peak, the LLM request included (measured). */
  static final int BODY_FACTOR = 9;

  /** Heap one request in flight takes besides its body (measured with 1,000 slow calls). */
  static final long REQUEST_BYTES = 64L << 10;

  /** Heap one character of history takes: 2 bytes held, 8 more as part of an LLM request. */
  static final int HISTORY_FACTOR = 10;

  /** This process's heap. */
  public static MemoryBudget ofThisProcess() {
    return new MemoryBudget(Runtime.getRuntime().maxMemory());
  }

  /**
   * The heap left for requests and histories: all but the runtime's own and an eighth kept free, so
   * the garbage collector is never working in the last bytes.
   */
  long usableBytes() {
    return Math.max(0, heapBytes - BASELINE_BYTES - heapBytes / 8);
  }

  /** Request body bytes held at once: 45 % of the usable heap, at {@link #BODY_FACTOR} each. */
  public long bodyBytesHeld() {
    return Math.max(1L << 20, Math.min(Integer.MAX_VALUE, usableBytes() * 45 / 100 / BODY_FACTOR));
  }

  /** The largest request body: all the bytes held at once, at most {@link #MAX_BODY_BYTES}. */
  public long maxBodyBytes() {
    return Math.min(MAX_BODY_BYTES, bodyBytesHeld());
  }

  /** Requests answered at once: 25 % of the usable heap, at {@link #REQUEST_BYTES} each. */
  public int maxConcurrentRequests() {
    return (int) Math.max(16, Math.min(1 << 20, usableBytes() * 25 / 100 / REQUEST_BYTES));
  }

  /**
   * Characters of conversation history the process holds, every agent's together: 30 % of the
   * usable heap, at {@link #HISTORY_FACTOR} bytes each.
   */
  public long historyChars() {
    return Math.max(1L << 20, usableBytes() * 30 / 100 / HISTORY_FACTOR);
  }
}
