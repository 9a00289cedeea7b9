package ca.helu.pallas.runtime.health;

import java.time.Instant;

/** The outcome of one probe (a downstream MCP server or an LLM provider). */
public record CheckResult(boolean ok, String message, Instant checkedAt) {
  public static CheckResult ok(String message) {
    return new CheckResult(true, message, Instant.now());
  }

  public static CheckResult failed(String message) {
    return new CheckResult(false, message, Instant.now());
  }
}
