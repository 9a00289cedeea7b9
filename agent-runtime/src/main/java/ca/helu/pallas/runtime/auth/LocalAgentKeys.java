package ca.helu.pallas.runtime.auth;

import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The agents' identities when a whole fleet runs in one process ({@code serve} without {@code
 * --agent}; docs/runtime.md, "Agents calling agents"): one random 256-bit key per agent, made at
 * start, held only in this process's memory and never written anywhere. An agent presents its key
 * to the agents it calls, which know it as that agent's (compared in constant time, held as
 * digests, as {@link StaticTokens} are). The fleet's registry, in the same process, has one too,
 * which every agent knows as an observer's.
 */
public final class LocalAgentKeys {
  /** What every key starts with, so that no caller's token is mistaken for one by its form. */
  static final String PREFIX = "pallas-agent.";

  /** The registry's key's name among the agents' (no agent may have it: not a valid name). */
  static final String REGISTRY = "(registry)";

  private final Map<String, String> keys = new LinkedHashMap<>();
  private final Map<String, byte[]> digests = new LinkedHashMap<>();

  /** Keys for these agents, and for the fleet's registry. */
  public LocalAgentKeys(Collection<String> agents) {
    SecureRandom random = new SecureRandom();
    for (String agent : concat(agents, REGISTRY)) {
      byte[] bytes = new byte[32];
      random.nextBytes(bytes);
      String key = PREFIX + HexFormat.of().formatHex(bytes);
      keys.put(agent, key);
      digests.put(agent, StaticTokens.sha256(key));
    }
  }

  /** The key {@code agent} presents to the agents it calls. */
  public String keyOf(String agent) {
    String key = keys.get(agent);
    if (key == null) {
      throw new IllegalArgumentException("no agent '" + agent + "' in this process");
    }
    return key;
  }

  /** The key the registry presents to every agent, which knows it as an observer's. */
  public String registryKey() {
    return keyOf(REGISTRY);
  }

  private static List<String> concat(Collection<String> agents, String more) {
    List<String> all = new ArrayList<>(agents);
    all.add(more);
    return all;
  }

  /**
   * The identities {@code callee} accepts: the keys of {@code callers}, the agents calling it, and
   * the registry's.
   */
  public AgentTokens acceptedBy(Set<String> callers) {
    return token -> {
      if (!token.startsWith(PREFIX)) {
        return Optional.empty();
      }
      byte[] presented = StaticTokens.sha256(token);
      String match = null;
      for (Map.Entry<String, byte[]> e : digests.entrySet()) {
        // every key is compared, a match or not
        if (MessageDigest.isEqual(presented, e.getValue()) && match == null) {
          match = e.getKey();
        }
      }
      if (REGISTRY.equals(match)) {
        return Optional.of(AgentTokens.Identity.OBSERVER);
      }
      if (match == null || !callers.contains(match)) {
        throw new AuthFailure(
            AuthFailure.Code.INVALID_TOKEN,
            match == null
                ? "the agent key is not one of this fleet's"
                : "agent '" + match + "' does not list this agent among its servers");
      }
      return Optional.of(new AgentTokens.Identity(match));
    };
  }
}
