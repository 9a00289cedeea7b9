package ca.helu.pallas.runtime.loop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** How a call stops: the first stop wins, a finished call no longer stops, the deadline fires. */
class CancellationTest {
  @Test
  void theFirstStopWinsAndRunsTheActionsOnce() {
    Cancellation call = new Cancellation();
    List<Cancellation.Reason> heard = new CopyOnWriteArrayList<>();
    call.onStop(heard::add);
    assertThat(call.stop(Cancellation.Reason.CANCELLED)).isTrue();
    assertThat(call.stop(Cancellation.Reason.DEADLINE)).isFalse();
    assertThat(heard).containsExactly(Cancellation.Reason.CANCELLED);
    assertThat(call.reason()).isEqualTo(Cancellation.Reason.CANCELLED);
    // an action registered later runs at once
    call.onStop(heard::add);
    assertThat(heard).hasSize(2);
    assertThat(call.finish()).as("a stopped call's result is dropped").isFalse();
  }

  @Test
  void aFinishedCallIsNoLongerStopped() {
    Cancellation call = new Cancellation();
    List<Cancellation.Reason> heard = new CopyOnWriteArrayList<>();
    call.onStop(heard::add);
    assertThat(call.finish()).isTrue();
    assertThat(call.stop(Cancellation.Reason.SESSION_DELETED)).isFalse();
    assertThat(heard).isEmpty();
    assertThat(call.stopped()).isFalse();
  }

  @Test
  void anUnregisteredActionDoesNotRun() {
    Cancellation call = new Cancellation();
    List<Cancellation.Reason> heard = new CopyOnWriteArrayList<>();
    call.onStop(heard::add).run();
    call.stop(Cancellation.Reason.CANCELLED);
    assertThat(heard).isEmpty();
  }

  @Test
  void aStopInterruptsTheAttachedThreadAfterTheActions() throws Exception {
    Cancellation call = new Cancellation();
    CountDownLatch attached = new CountDownLatch(1);
    List<String> order = new CopyOnWriteArrayList<>();
    call.onStop(why -> order.add("action"));
    Thread worker =
        Thread.startVirtualThread(() -> {
          call.attach();
          attached.countDown();
          try {
            Thread.sleep(60_000);
          } catch (InterruptedException e) {
            order.add("interrupted");
          }
        });
    assertThat(attached.await(10, TimeUnit.SECONDS)).isTrue();
    call.stop(Cancellation.Reason.DISCONNECTED);
    worker.join(10_000);
    assertThat(order).containsExactly("action", "interrupted");
  }

  @Test
  void theDeadlineStopsTheCallWhenItPasses() {
    Cancellation call = new Cancellation();
    assertThat(call.remaining()).as("no deadline before the turn starts").isNull();
    call.startDeadline(Duration.ofMillis(200));
    assertThat(call.deadline()).isEqualTo(Duration.ofMillis(200));
    assertThat(call.remaining()).isLessThanOrEqualTo(Duration.ofMillis(200));
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> call.reason() == Cancellation.Reason.DEADLINE);
    assertThat(call.remaining()).isEqualTo(Duration.ZERO);
  }
}
