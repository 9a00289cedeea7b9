package ca.helu.pallas.runtime.testing;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/** What the benchmark tests share (docs/benchmarks.md): timed calls and their percentiles. */
public final class Benchmarks {
  private Benchmarks() {}

  /** {@code count} send_message calls on the session, one after another: each one's nanoseconds. */
  public static List<Long> calls(RawMcp session, int count) throws Exception {
    List<Long> nanos = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      long t = System.nanoTime();
      JsonNode result = session.callTool("send_message", Map.of("message", "call " + i));
      nanos.add(System.nanoTime() - t);
      assertThat(result.path("isError").asBoolean()).isFalse();
    }
    return nanos;
  }

  /** The {@code p}th percentile (nearest rank). */
  public static long percentile(List<Long> values, int p) {
    long[] sorted = values.stream().mapToLong(Long::longValue).toArray();
    Arrays.sort(sorted);
    return sorted[Math.min(sorted.length - 1, (int) Math.ceil(p / 100.0 * sorted.length) - 1)];
  }

  public static double ms(long nanos) {
    return nanos / 1e6;
  }
}
