package ca.helu.pallas.runtime.health;

import java.time.Duration;
import java.time.Instant;

/**
 * The outcome of one probe (a downstream MCP server or an LLM provider).
 *
 * @param latency how long the probe took, or null when it was not timed
 */
public record CheckResult(boolean ok, String message, Instant checkedAt, Duration latency) {
  public static CheckResult ok(String message) {
    return new CheckResult(true, message, Instant.now(), null);
  }

  public static CheckResult failed(String message) {
    return new CheckResult(false, message, Instant.now(), null);
  }

  /** This result, timed: the probe took {@code latency}. */
  public CheckResult took(Duration latency) {
    return new CheckResult(ok, message, checkedAt, latency);
  }
}
