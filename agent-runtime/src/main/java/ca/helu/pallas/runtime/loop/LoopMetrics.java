package ca.helu.pallas.runtime.loop;

import java.time.Duration;
import java.util.Map;

/**
 * What the agent loop reports as it runs: its port to the metrics, so that the loop depends on no
 * metrics library or registry (docs/development.md, "Package arrows"). `serve` connects it to the
 * runtime's Prometheus metrics (docs/operations.md, "Metrics").
 */
public interface LoopMetrics {
  /** One LLM round-trip of {@code agent} with {@code model}, and the tokens it used by kind. */
  void llmTurn(String agent, String model, Map<String, Long> tokensByKind);

  /**
   * One tool call of {@code agent} to {@code server}: whether it succeeded, and how long it took.
   */
  void toolCall(String agent, String server, boolean ok, Duration took);
}
