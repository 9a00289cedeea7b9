package ca.helu.pallas.runtime.mcp;

import java.time.Duration;

/**
 * How long one call's turn may take, and how soon a client that left is noticed (docs/runtime.md,
 * "Deadlines and cancellation").
 *
 * @param deadline the most one send_message turn takes, from the moment it has its conversation to
 *     itself (a call queued behind others waits for them first): its LLM requests, their retries
 *     and waits, and its tool calls. Past it the call is answered with an error naming the agent,
 *     its model, what it was waiting for and the deadline, its conversation is free for the next
 *     call, and what it was waiting for is cancelled.
 * @param heartbeat how often a call's open response stream gets an SSE comment line: writing is how
 *     a client that disconnected is noticed (its call then stops as if cancelled), and the comments
 *     keep idle-timing proxies from cutting a long call
 */
public record TurnLimits(Duration deadline, Duration heartbeat) {
  public static final TurnLimits DEFAULT =
      new TurnLimits(Duration.ofMinutes(5), Duration.ofSeconds(15));

  public TurnLimits {
    if (!deadline.isPositive() || !heartbeat.isPositive()) {
      throw new IllegalArgumentException("the turn deadline and the heartbeat must be positive");
    }
  }
}
