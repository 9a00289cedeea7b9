package ca.helu.pallas.runtime.loop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class TurnSlotTest {
  @Test
  void aStopFreesTheSlotAtOnceWhileTheStoppedTurnStillRuns() throws Exception {
    TurnSlot c = new TurnSlot();
    Cancellation stuck = new Cancellation();
    CountDownLatch inside = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    Thread first =
        Thread.startVirtualThread(() -> {
          try {
            c.exclusive(
                stuck,
                () -> {
                  inside.countDown();
                  // a turn that does not notice its interrupt (a non-interruptible wait)
                  boolean done = false;
                  while (!done) {
                    try {
                      release.await();
                      done = true;
                    } catch (InterruptedException e) {
                      // keeps waiting
                    }
                  }
                  return null;
                });
          } catch (TurnSlot.Stopped e) {
            throw new AssertionError(e);
          }
        });
    assertThat(inside.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(c.waiting()).isEqualTo(1);

    stuck.stop(Cancellation.Reason.CANCELLED);

    // the next call has the history to itself although the stopped turn has not returned
    assertTimeoutPreemptively(
        Duration.ofSeconds(10),
        () -> assertThat(c.exclusive(new Cancellation(), () -> "next")).isEqualTo("next"));
    assertThat(first.isAlive()).isTrue();
    release.countDown();
    first.join(10_000);
    assertThat(c.waiting()).isZero();
  }

  @Test
  void aQueuedCallThatStopsLeavesTheQueue() throws Exception {
    TurnSlot c = new TurnSlot();
    CountDownLatch inside = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    Thread.startVirtualThread(() -> {
      try {
        c.exclusive(
            new Cancellation(),
            () -> {
              inside.countDown();
              waitFor(release);
              return null;
            });
      } catch (Exception e) {
        throw new AssertionError(e);
      }
    });
    assertThat(inside.await(10, TimeUnit.SECONDS)).isTrue();
    Cancellation queued = new Cancellation();
    CompletableFuture<Throwable> outcome = new CompletableFuture<>();
    Thread.startVirtualThread(() -> {
      queued.attach();
      try {
        c.exclusive(queued, () -> "ran");
        outcome.complete(null);
      } catch (Throwable e) {
        outcome.complete(e);
      }
    });
    await().atMost(Duration.ofSeconds(10)).until(() -> c.waiting() == 2);

    queued.stop(Cancellation.Reason.DISCONNECTED);

    assertThat(outcome.get(10, TimeUnit.SECONDS)).isInstanceOf(TurnSlot.Stopped.class);
    assertThat(c.waiting()).isEqualTo(1);
    release.countDown();
  }

  private static void waitFor(CountDownLatch latch) {
    try {
      latch.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
