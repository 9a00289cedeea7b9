package ca.helu.pallas.bench;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class LoadTest {
  @Test
  void wrkErrorsCountRefusedAndTimedOutRequests() {
    String out =
        """
        Running 10s test @ http://127.0.0.1:8000/mcp
          2 threads and 64 connections
          64 requests in 10.01s, 30.12KB read
          Socket errors: connect 0, read 1, write 0, timeout 12
          Non-2xx or 3xx responses: 3
        Requests/sec:      6.39
        """;

    assertThat(Load.wrkErrors(out)).isEqualTo(16);
  }

  @Test
  void aCleanWrkRunHasNoErrors() {
    assertThat(Load.wrkErrors("  100 requests in 1.00s\nRequests/sec: 100.0\n")).isZero();
  }

  @Test
  void cpuPerCallSpreadsTheWindowsCpuOnItsCalls() {
    Load.Result r = new Load.Result(100, 1, 2, 4000, 0).withCpu(2_000_000_000L);

    assertThat(r.cpuMicros()).isEqualTo(500.0);
  }
}
