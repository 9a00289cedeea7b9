package ca.helu.pallas.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A process's CPU time from /proc/&lt;pid&gt;/stat (utime + stime), so servers in any language (a
 * JVM, fast-agent's Python) are measured the same way.
 */
final class ProcStat {
  /** Linux reports utime and stime in clock ticks of USER_HZ, 100 on every common build. */
  static final long TICKS_PER_SECOND = 100;

  private ProcStat() {}

  /** CPU time (user + system) of the process, in nanoseconds. */
  static long cpuNanos(long pid) throws IOException {
    return cpuNanos(Files.readString(Path.of("/proc", Long.toString(pid), "stat")));
  }

  /**
   * CPU time in a stat line. The command name (field 2) is in parentheses and may hold spaces or
   * parentheses itself, so fields are counted from the last ')': utime and stime are fields 14 and
   * 15 of the line, the 12th and 13th after it.
   */
  static long cpuNanos(String statLine) {
    int close = statLine.lastIndexOf(')');
    if (close < 0) {
      throw new IllegalArgumentException("not a /proc/<pid>/stat line: " + statLine);
    }
    String[] fields = statLine.substring(close + 1).trim().split("\\s+");
    if (fields.length < 13) {
      throw new IllegalArgumentException("too few fields in /proc/<pid>/stat: " + statLine);
    }
    long ticks = Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
    return ticks * (1_000_000_000L / TICKS_PER_SECOND);
  }

  /** Microseconds of CPU per call, from a CPU delta in nanoseconds and the calls it served. */
  static double microsPerCall(long cpuNanos, long calls) {
    return calls <= 0 ? Double.NaN : cpuNanos / 1000.0 / calls;
  }
}
