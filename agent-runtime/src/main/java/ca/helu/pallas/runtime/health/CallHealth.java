package ca.helu.pallas.runtime.health;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.LongSupplier;

/**
 * How one downstream server's calls have gone lately, for get_health: a server that answers the
 * probe's {@code initialize} but fails its calls (resets, garbage, dropped streams, timeouts) is
 * not healthy (docs/runtime.md, "Health").
 *
 * <p>It is reported failing while its latest call failed and at least half of its calls in the last
 * minute failed: a broken server shows at once, one stray failure among many good calls does not,
 * and a repaired server is reported well again from its first good call.
 */
public final class CallHealth {
  /** For servers whose calls are not tracked. */
  public static final CallHealth NONE = new CallHealth(System::nanoTime);

  static final Duration WINDOW = Duration.ofMinutes(1);
  private static final int BUCKETS = 6;
  private static final long BUCKET_NANOS = WINDOW.toNanos() / BUCKETS;

  private final LongSupplier nanoTime;
  private final long[] bucketOf = new long[BUCKETS];
  private final int[] ok = new int[BUCKETS];
  private final int[] failed = new int[BUCKETS];
  private boolean lastFailed;
  private String lastFailure;
  private final List<Runnable> flips = new CopyOnWriteArrayList<>();

  public CallHealth() {
    this(System::nanoTime);
  }

  CallHealth(LongSupplier nanoTime) {
    this.nanoTime = nanoTime;
    Arrays.fill(bucketOf, Long.MIN_VALUE);
  }

  /**
   * Runs {@code flip} each time a call makes the server failing or well again, so that a health
   * subscriber hears of it at once (docs/runtime.md, "Health as a resource").
   */
  public void onFlip(Runnable flip) {
    if (this != NONE) {
      flips.add(flip);
    }
  }

  /** A call the server answered (an {@code isError} result or a JSON-RPC error is an answer). */
  public void answered() {
    boolean flipped;
    synchronized (this) {
      boolean before = failing().isPresent();
      ok[bucket()]++;
      lastFailed = false;
      flipped = before;
    }
    if (flipped) {
      flips.forEach(Runnable::run);
    }
  }

  /** A call the server did not answer; {@code why} is already bounded. */
  public void failed(String why) {
    boolean flipped;
    synchronized (this) {
      boolean before = failing().isPresent();
      failed[bucket()]++;
      lastFailed = true;
      lastFailure = why;
      flipped = !before && failing().isPresent();
    }
    if (flipped) {
      flips.forEach(Runnable::run);
    }
  }

  /** Why the server's calls are failing, or empty when they are not. */
  public synchronized Optional<String> failing() {
    if (!lastFailed) {
      return Optional.empty();
    }
    long now = nanoTime.getAsLong() / BUCKET_NANOS;
    int good = 0;
    int bad = 0;
    for (int i = 0; i < BUCKETS; i++) {
      if (bucketOf[i] > now - BUCKETS) {
        good += ok[i];
        bad += failed[i];
      }
    }
    if (bad == 0 || bad < good) {
      return Optional.empty();
    }
    return Optional.of(bad + " of " + (bad + good) + " calls in the last minute; " + lastFailure);
  }

  private int bucket() {
    long index = nanoTime.getAsLong() / BUCKET_NANOS;
    int slot = (int) Math.floorMod(index, (long) BUCKETS);
    if (bucketOf[slot] != index) {
      bucketOf[slot] = index;
      ok[slot] = 0;
      failed[slot] = 0;
    }
    return slot;
  }
}
