package ca.helu.pallas.runtime.llm;

import java.time.Duration;

/**
 * How model calls are retried ({@link RetryingModel}): {@code attempts} in all, waiting {@code
 * backoff} before the second and twice as long before each next one, or longer when the provider
 * asks for it ({@code Retry-After}); {@code timeout} bounds one attempt as a whole, from sending
 * the request to the answer's last byte (docs/runtime.md, "Deadlines and cancellation").
 */
public record Retry(int attempts, Duration backoff, Duration timeout) {
  public static final Retry DEFAULT = new Retry(3, Duration.ofMillis(500), Duration.ofSeconds(120));

  /** Waits between attempts (Thread::sleep; tests record instead). */
  public interface Sleeper {
    void sleep(Duration duration) throws InterruptedException;
  }

  /** The same policy with another bound on one attempt. */
  public Retry withTimeout(Duration attemptTimeout) {
    return new Retry(attempts, backoff, attemptTimeout);
  }
}
