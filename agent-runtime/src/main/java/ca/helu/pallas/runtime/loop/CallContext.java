package ca.helu.pallas.runtime.loop;

import java.util.Optional;

/**
 * Identity of one inbound call, passed explicitly down the loop: the caller's bearer (forwarded
 * only to servers that opt in) and where progress goes. Never stored beyond the call.
 */
public record CallContext(String requestId, Optional<String> bearer, Progress progress) {
  public static CallContext anonymous(String requestId) {
    return new CallContext(requestId, Optional.empty(), Progress.NONE);
  }
}
