package ca.helu.pallas.runtime.auth;

import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

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
   * An identity a token proved: the agents it may stand for. An agent whose ServiceAccount is its
   * own has one; agents that share one (a pod group's, or the user's {@code serviceAccountName} for
   * several) are told apart by the agent each request names ({@link CarriedCaller#AGENT_HEADER}),
   * which the shared token cannot prove: such agents trust each other, as agents of one process do.
   *
   * @param agents the calling agents' names, none for an observer
   */
  record Identity(Set<String> agents) {
    /**
     * The operator (its Verified handshake) or the fleet's registry (its links): they may do what a
     * client without a token may with openHealth, whatever openHealth says, and no more.
     */
    public static final Identity OBSERVER = new Identity(Set.of());

    public Identity {
      agents = Set.copyOf(agents);
    }

    /** The identity of one agent. */
    public Identity(String agent) {
      this(Set.of(agent));
    }

    public boolean isObserver() {
      return agents.isEmpty();
    }

    /**
     * The calling agent: the one a request names ({@code named}, null when it names none), which
     * must be one of these; without a name, the only one.
     *
     * @throws AuthFailure when the name is not one of these, or missing where several share it
     */
    public String agent(String named) throws AuthFailure {
      if (named != null) {
        if (!agents.contains(named)) {
          throw new AuthFailure(
              AuthFailure.Code.INVALID_TOKEN,
              "the token is not that of an agent named in " + CarriedCaller.AGENT_HEADER);
        }
        return named;
      }
      if (agents.size() != 1) {
        throw new AuthFailure(
            AuthFailure.Code.INVALID_TOKEN,
            "the token's ServiceAccount is shared by agents "
                + String.join(", ", new TreeSet<>(agents))
                + ": the request must name its agent in "
                + CarriedCaller.AGENT_HEADER);
      }
      return agents.iterator().next();
    }
  }
}
