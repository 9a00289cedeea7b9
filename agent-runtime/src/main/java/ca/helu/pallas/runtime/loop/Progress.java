package ca.helu.pallas.runtime.loop;

/**
 * Progress of one agent call, in the message formats of docs/contract.md, "Progress".
 * Implementations must be safe to call from parallel tool calls and must never throw (progress is
 * best-effort).
 */
public interface Progress {
  Progress NONE =
      new Progress() {
        @Override
        public void step(int step, String kind) {}

        @Override
        public void toolStarted(String server, String tool) {}

        @Override
        public void toolFinished(String server, String tool, boolean ok) {}

        @Override
        public void relay(String message, boolean finished) {}

        @Override
        public void text(String piece) {}

        @Override
        public void flush() {}
      };

  /** {@code {agent} step N (llm|tool)}. */
  void step(int step, String kind);

  /** {@code {server}/{tool}: started}. */
  void toolStarted(String server, String tool);

  /** {@code {server}/{tool}: completed|failed}, with total = progress. */
  void toolFinished(String server, String tool, boolean ok);

  /**
   * A progress message from a downstream call (a sub-agent's own steps), passed on under this
   * call's token and counter; {@code finished} when the sub-task it describes is done.
   */
  void relay(String message, boolean finished);

  /**
   * A downstream progress notification as it came: by default its message, if any, as {@link
   * #relay}; the registry, which relays one call under its caller's token, passes on the numbers
   * too.
   */
  default void relayed(double progress, Double total, String message) {
    if (message != null) {
      relay(message, total != null && total == progress);
    }
  }

  /**
   * A piece of the LLM's answer text as the model writes it: {@code {agent} text: …}, pieces
   * batched into at most one notification per 100 ms, sent before any other message of the call.
   */
  void text(String piece);

  /** Sends the text not sent yet (the answer is complete, or its request failed). */
  void flush();
}
