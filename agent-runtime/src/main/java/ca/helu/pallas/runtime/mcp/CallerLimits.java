package ca.helu.pallas.runtime.mcp;

import ca.helu.pallas.api.CallerLimitsSpec;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;

/**
 * One agent's limits per caller (docs/runtime.md, "Per-caller limits"; spec.callerLimits): calls at
 * once, calls per minute (a bucket of that many calls refilled evenly over a minute) and LLM tokens
 * per hour (a budget of that many tokens refilled evenly over an hour, charged after each call with
 * what it spent). A call past one is refused before it starts, with JSON-RPC error {@link #CODE}
 * naming the limit and when to retry. Callers idle for two hours are forgotten, so the state held
 * is bounded by the callers active in that time.
 */
final class CallerLimits {
  /** JSON-RPC's implementation-defined server error for a rate limit (seed 003's -32002). */
  static final int CODE = -32002;

  /** No limit at all: every call admitted, nothing kept. */
  static final CallerLimits NONE = new CallerLimits("-", null, System::nanoTime);

  private static final long MINUTE = 60_000_000_000L;
  private static final long HOUR = 60 * MINUTE;
  private static final long FORGET_AFTER = 2 * HOUR;

  private final String agent;
  private final CallerLimitsSpec spec;
  private final LongSupplier nanoTime;
  private final Map<String, Usage> callers = new ConcurrentHashMap<>();
  private final AtomicInteger admissions = new AtomicInteger();

  CallerLimits(String agent, CallerLimitsSpec spec, LongSupplier nanoTime) {
    this.agent = agent;
    this.spec = spec;
    this.nanoTime = nanoTime;
  }

  static CallerLimits of(String agent, CallerLimitsSpec spec) {
    return spec == null ? NONE : new CallerLimits(agent, spec, System::nanoTime);
  }

  /** A call refused for a limit: which one, and in how many seconds a retry may pass. */
  static final class Refused extends Exception {
    final String limit;
    final long retryAfterSeconds;

    Refused(String limit, long retryAfterSeconds, String message) {
      super(message, null, false, false);
      this.limit = limit;
      this.retryAfterSeconds = retryAfterSeconds;
    }

    /** The JSON-RPC error the caller gets. */
    McpError asMcpError() {
      return new McpError(
          new McpSchema.JSONRPCResponse.JSONRPCError(
              CODE, getMessage(), Map.of("limit", limit, "retryAfterSeconds", retryAfterSeconds)));
    }
  }

  /**
   * An admitted call: {@link #charge} the LLM tokens it spent, {@link #release} its place once it
   * is over (again is harmless: a call stopped before its turn ran is released by its answer).
   */
  interface Admission {
    void charge(long llmTokens);

    void release();
  }

  private static final Admission FREE =
      new Admission() {
        @Override
        public void charge(long llmTokens) {}

        @Override
        public void release() {}
      };

  /** Admits a call of {@code caller} (null: no inbound authentication) or refuses it. */
  Admission admit(String caller) throws Refused {
    if (spec == null) {
      return FREE;
    }
    String name = caller == null ? "-" : caller;
    long now = nanoTime.getAsLong();
    if ((admissions.incrementAndGet() & 1023) == 0) {
      callers.values().removeIf(u -> u.idle(now));
    }
    Usage usage = callers.computeIfAbsent(name, n -> new Usage(now));
    return usage.admit(name, now);
  }

  /** What one caller uses of the agent. */
  private final class Usage {
    private int running;
    private double calls;
    private double tokens;
    private long refilledAt;
    private long lastUse;

    Usage(long now) {
      this.calls = spec.callsPerMinute() == null ? 0 : spec.callsPerMinute();
      this.tokens = spec.llmTokensPerHour() == null ? 0 : spec.llmTokensPerHour();
      this.refilledAt = now;
      this.lastUse = now;
    }

    synchronized boolean idle(long now) {
      return running == 0 && now - lastUse > FORGET_AFTER;
    }

    synchronized Admission admit(String caller, long now) throws Refused {
      refill(now);
      lastUse = now;
      Integer concurrent = spec.concurrentCalls();
      if (concurrent != null && running >= concurrent) {
        throw new Refused(
            "concurrentCalls",
            1,
            "Too Many Requests: caller '"
                + caller
                + "' has "
                + running
                + " calls to agent '"
                + agent
                + "' in progress, its limit (concurrentCalls "
                + concurrent
                + "); retry when one has ended");
      }
      Integer perMinute = spec.callsPerMinute();
      if (perMinute != null && calls < 1) {
        long wait = seconds((1 - calls) * MINUTE / perMinute);
        throw new Refused(
            "callsPerMinute",
            wait,
            "Too Many Requests: caller '"
                + caller
                + "' has made its "
                + perMinute
                + " calls per minute to agent '"
                + agent
                + "' (callsPerMinute); retry in "
                + wait
                + " s");
      }
      Long perHour = spec.llmTokensPerHour();
      if (perHour != null && tokens <= 0) {
        long wait = seconds((1 - tokens) * HOUR / perHour);
        throw new Refused(
            "llmTokensPerHour",
            wait,
            "Too Many Requests: caller '"
                + caller
                + "' has spent its "
                + perHour
                + " LLM tokens per hour with agent '"
                + agent
                + "' (llmTokensPerHour); retry in "
                + wait
                + " s");
      }
      if (perMinute != null) {
        calls -= 1;
      }
      running++;
      AtomicBoolean released = new AtomicBoolean();
      Usage usage = this;
      return new Admission() {
        @Override
        public void charge(long llmTokens) {
          usage.charge(llmTokens);
        }

        @Override
        public void release() {
          if (released.compareAndSet(false, true)) {
            usage.release();
          }
        }
      };
    }

    private synchronized void release() {
      running--;
    }

    private synchronized void charge(long spent) {
      refill(nanoTime.getAsLong());
      if (spec.llmTokensPerHour() != null) {
        tokens -= spent;
      }
    }

    private void refill(long now) {
      long elapsed = Math.max(0, now - refilledAt);
      refilledAt = now;
      if (spec.callsPerMinute() != null) {
        int max = spec.callsPerMinute();
        calls = Math.min(max, calls + (double) elapsed * max / MINUTE);
      }
      if (spec.llmTokensPerHour() != null) {
        long max = spec.llmTokensPerHour();
        tokens = Math.min(max, tokens + (double) elapsed * max / HOUR);
      }
    }

    private static long seconds(double nanos) {
      return Math.max(1, (long) Math.ceil(nanos / 1e9));
    }
  }
}
