package ca.helu.pallas.runtime.http;

import java.util.concurrent.Semaphore;

/**
 * The requests and request body bytes that every agent of one process holds at once ({@link
 * EdgeLimits}), shared by their MCP endpoints: the heap they come out of is the process's
 * (docs/runtime.md, "Memory").
 */
public final class RequestPool {
  private final EdgeLimits limits;
  private final Semaphore requests;
  private final Semaphore bodyBytes;

  public RequestPool(EdgeLimits limits) {
    this.limits = limits;
    this.requests = new Semaphore(limits.maxConcurrentRequests());
    this.bodyBytes = new Semaphore((int) limits.maxBodyBytesHeld());
  }

  public EdgeLimits limits() {
    return limits;
  }

  boolean tryRequest() {
    return requests.tryAcquire();
  }

  void releaseRequest() {
    requests.release();
  }

  /** Holds {@code n} more body bytes, or nothing when the limit would be passed. */
  boolean tryBodyBytes(int n) {
    return bodyBytes.tryAcquire(n);
  }

  void releaseBodyBytes(int n) {
    if (n > 0) {
      bodyBytes.release(n);
    }
  }

  /** Body bytes held now (for tests and metrics). */
  public long bodyBytesHeld() {
    return limits.maxBodyBytesHeld() - bodyBytes.availablePermits();
  }

  /** Requests answered now, of those counted. */
  public int requestsHeld() {
    return limits.maxConcurrentRequests() - requests.availablePermits();
  }
}
