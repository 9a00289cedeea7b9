package ca.helu.pallas.runtime.auth;

import java.util.Optional;

/**
 * Which of the fleet's own agents (or its registry, or the operator) a bearer token names, on the
 * agent it calls (docs/runtime.md, "Agents calling agents"): in one process the keys {@link
 * LocalAgentKeys} hands out, in a cluster ServiceAccount tokens ({@link ServiceAccountTokens}).
 */
public interface AgentTokens {
  /**
   * Who the token names; empty when it is none of theirs (then it is a caller's own token).
   *
   * @throws AuthFailure when it is one of theirs but not valid: expired, meant for another agent,
   *     or of an account that may not call this agent
   */
  Optional<Identity> identify(String token) throws AuthFailure;

  /** Why such tokens cannot be checked now, or empty. */
  default Optional<String> problem() {
    return Optional.empty();
  }

  /**
   * An identity a token proved.
   *
   * @param agent the calling agent's name, or null for an observer
   */
  record Identity(String agent) {
    /**
     * The operator (its Verified handshake) or the fleet's registry (its links): they may do what a
     * client without a token may with openHealth, whatever openHealth says, and no more.
     */
    public static final Identity OBSERVER = new Identity(null);

    public boolean isObserver() {
      return agent == null;
    }
  }
}
