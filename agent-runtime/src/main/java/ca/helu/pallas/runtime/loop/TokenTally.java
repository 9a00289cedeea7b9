package ca.helu.pallas.runtime.loop;

import java.util.Map;
import java.util.TreeMap;

/**
 * The LLM tokens one call spent, by kind (input, output), over all its model requests: for the
 * call's audit line (docs/operations.md, "Audit").
 */
public final class TokenTally {
  private final Map<String, Long> byKind = new TreeMap<>();

  synchronized void add(Map<String, Long> tokens) {
    tokens.forEach((kind, count) -> byKind.merge(kind, count, Long::sum));
  }

  /** The tokens of {@code kind} spent so far; 0 when none. */
  public synchronized long of(String kind) {
    return byKind.getOrDefault(kind, 0L);
  }
}
