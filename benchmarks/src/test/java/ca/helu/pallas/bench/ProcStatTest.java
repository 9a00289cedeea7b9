package ca.helu.pallas.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class ProcStatTest {
  @Test
  void userPlusSystemTicksBecomeNanoseconds() {
    // a real line from a JVM: utime 1234, stime 56 (fields 14 and 15)
    String line =
        "4242 (java) S 1 4242 4242 0 -1 4194560 51234 0 12 0 1234 56 0 0 20 0 40 0 2714 "
            + "3951566848 52000 18446744073709551615 1 1 0 0 0 0 0 4096 16796399 0 0 0 17 1 0 0";

    assertThat(ProcStat.cpuNanos(line)).isEqualTo((1234 + 56) * 10_000_000L);
  }

  @Test
  void aCommandNameWithSpacesAndParenthesesDoesNotShiftTheFields() {
    String line = "77 (python3 (fast agent)) R 1 77 77 0 -1 0 0 0 0 0 300 20 5 5 20 0 3 0 99 1 1";

    assertThat(ProcStat.cpuNanos(line)).isEqualTo(320 * 10_000_000L);
  }

  @Test
  void aTruncatedLineIsRefusedRatherThanMisread() {
    assertThatThrownBy(() -> ProcStat.cpuNanos("12 (x) S 1 2 3"))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void ourOwnProcessHasSpentSomeCpu() throws Exception {
    assertThat(ProcStat.cpuNanos(ProcessHandle.current().pid())).isPositive();
  }

  @Test
  void cpuPerCallIsTheDeltaOverTheCalls() {
    assertThat(ProcStat.microsPerCall(2_000_000_000L, 10_000)).isEqualTo(200.0);
    assertThat(ProcStat.microsPerCall(5, 0)).isNaN();
  }
}
