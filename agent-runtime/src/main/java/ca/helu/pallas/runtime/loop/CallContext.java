package ca.helu.pallas.runtime.loop;

import java.util.Optional;

/**
 * Identity of one inbound call, passed explicitly down the loop: the caller's bearer (forwarded or
 * exchanged only for servers that ask for it), who the caller is (carried to the agents it calls),
 * where progress goes, how the call may stop early (its deadline, a cancel), and the LLM tokens it
 * spends. Never stored beyond the call.
 *
 * @param caller who the call is for, or empty without inbound authentication
 */
public record CallContext(
    String requestId,
    Optional<String> bearer,
    Optional<CallerId> caller,
    Progress progress,
    Cancellation cancellation,
    TokenTally tokens) {
  public CallContext(
      String requestId, Optional<String> bearer, Progress progress, Cancellation cancellation) {
    this(requestId, bearer, Optional.empty(), progress, cancellation, new TokenTally());
  }

  public static CallContext anonymous(String requestId) {
    return new CallContext(requestId, Optional.empty(), Progress.NONE, new Cancellation());
  }
}
