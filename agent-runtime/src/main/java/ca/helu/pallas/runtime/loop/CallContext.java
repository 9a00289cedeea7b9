package ca.helu.pallas.runtime.loop;

import java.util.Optional;

/**
 * Identity of one inbound call, passed explicitly down the loop: the caller's bearer (forwarded
 * only to servers that opt in), where progress goes, how the call may stop early (its deadline, a
 * cancel), and the LLM tokens it spends. Never stored beyond the call.
 */
public record CallContext(
    String requestId,
    Optional<String> bearer,
    Progress progress,
    Cancellation cancellation,
    TokenTally tokens) {
  public CallContext(
      String requestId, Optional<String> bearer, Progress progress, Cancellation cancellation) {
    this(requestId, bearer, progress, cancellation, new TokenTally());
  }

  public static CallContext anonymous(String requestId) {
    return new CallContext(requestId, Optional.empty(), Progress.NONE, new Cancellation());
  }
}
