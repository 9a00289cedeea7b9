package ca.helu.pallas.operator.status;

import java.util.List;

/**
 * What one agent's MCP endpoint answered the operator's handshake (docs/status.md, "Verified"): the
 * input of the agent's {@code Verified} condition in {@link StatusAggregator}.
 *
 * @param status True (answered), False (did not, or no pod to ask) or Unknown (not asked yet)
 * @param reason why, one of {@link Reason}
 * @param message what a user reads: what answered, or what failed and how
 * @param serverName serverInfo.name, or null
 * @param serverVersion serverInfo.version, or null
 * @param protocolVersion the protocol version the server chose, or null
 * @param tools the names tools/list gave, or null
 */
public record Verification(
    String status,
    Reason reason,
    String message,
    String serverName,
    String serverVersion,
    String protocolVersion,
    List<String> tools) {

  public Verification {
    tools = tools == null ? null : List.copyOf(tools);
  }

  public static Verification verified(
      String serverName, String serverVersion, String protocolVersion, List<String> tools) {
    return new Verification(
        "True",
        Reason.HandshakeSucceeded,
        "answered initialize (protocol "
            + protocolVersion
            + ") and tools/list ("
            + tools.size()
            + " tools)",
        serverName,
        serverVersion,
        protocolVersion,
        tools);
  }

  public static Verification failed(Reason reason, String message) {
    return new Verification("False", reason, message, null, null, null, null);
  }

  /** The agent has no ready pod: there is nothing to ask. */
  public static Verification noReadyPod() {
    return failed(Reason.NoReadyPod, "no ready pod to ask");
  }

  /** A handshake is on its way. */
  public static Verification pending() {
    return new Verification("Unknown", Reason.Pending, "not asked yet", null, null, null, null);
  }

  public boolean isTrue() {
    return "True".equals(status);
  }

  public boolean isFalse() {
    return "False".equals(status);
  }
}
