package ca.helu.pallas.runtime.llm;

import java.time.Duration;
import java.util.function.BiConsumer;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * How model calls are retried: {@code attempts} in all, waiting {@code backoff} before the second
 * and twice as long before each next one; {@code timeout} bounds one attempt.
 */
public record Retry(int attempts, Duration backoff, Duration timeout) {
  public static final Retry DEFAULT = new Retry(3, Duration.ofMillis(500), Duration.ofSeconds(120));

  /** Waits between attempts (Thread::sleep; tests record instead). */
  public interface Sleeper {
    void sleep(Duration duration) throws InterruptedException;
  }

  /**
   * Runs {@code attempt} until it succeeds, fails in a way {@code retryable} refuses, or the
   * attempts are used up; then throws its last failure. {@code beforeRetry} hears of each retry.
   */
  public <T> T run(
      Supplier<T> attempt,
      Predicate<RuntimeException> retryable,
      BiConsumer<Integer, RuntimeException> beforeRetry,
      Sleeper sleeper) {
    Duration wait = backoff;
    for (int n = 1; ; n++) {
      try {
        return attempt.get();
      } catch (RuntimeException e) {
        if (n >= attempts || !retryable.test(e)) {
          throw e;
        }
        beforeRetry.accept(n, e);
        try {
          sleeper.sleep(wait);
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
          throw e;
        }
        wait = wait.multipliedBy(2);
      }
    }
  }
}
