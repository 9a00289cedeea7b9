package ca.helu.pallas.runtime.auth;

import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.function.UnaryOperator;

/**
 * The caller an agent carries to the agents of its fleet it calls (docs/runtime.md, "Agents calling
 * agents"): two headers, percent-encoded, believed only on a request whose token is a valid
 * identity of an agent allowed to call (anyone else's are ignored). The agent that carried them is
 * the call's {@link Caller#via()}.
 */
public final class CarriedCaller {
  public static final String NAME_HEADER = "Pallas-Caller";
  public static final String CLIENT_HEADER = "Pallas-Caller-Client";

  /**
   * The calling agent's name, on every request an agent makes to another of its fleet: the agent
   * among those that share its identity ({@link AgentTokens.Identity#agent}).
   */
  public static final String AGENT_HEADER = "Pallas-Agent";

  /** The longest name or client read; longer ones refuse the request. */
  static final int MAX_LENGTH = 512;

  private CarriedCaller() {}

  /** The headers carrying {@code name} (and {@code client}, when not null). */
  public static Map<String, String> headers(String name, String client) {
    Map<String, String> headers = new LinkedHashMap<>();
    headers.put(NAME_HEADER, URLEncoder.encode(name, StandardCharsets.UTF_8));
    if (client != null) {
      headers.put(CLIENT_HEADER, URLEncoder.encode(client, StandardCharsets.UTF_8));
    }
    return headers;
  }

  /**
   * The caller agent {@code agent} carried, or the agent itself when it carried none (a request of
   * its own: its session's initialize, tools/list).
   *
   * @param header a request header by name, or null
   * @throws AuthFailure when a carried value cannot be read
   */
  static Caller read(String agent, UnaryOperator<String> header) throws AuthFailure {
    String name = value(header.apply(NAME_HEADER), NAME_HEADER);
    if (name == null) {
      return new Caller("agent:" + agent, null, Set.of(), agent);
    }
    return new Caller(name, value(header.apply(CLIENT_HEADER), CLIENT_HEADER), Set.of(), agent);
  }

  private static String value(String encoded, String header) throws AuthFailure {
    if (encoded == null || encoded.isEmpty()) {
      return null;
    }
    String decoded;
    try {
      decoded = URLDecoder.decode(encoded, StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      throw new AuthFailure(
          AuthFailure.Code.INVALID_TOKEN, "the " + header + " header is not percent-encoded");
    }
    if (decoded.length() > MAX_LENGTH || decoded.chars().anyMatch(Character::isISOControl)) {
      throw new AuthFailure(
          AuthFailure.Code.INVALID_TOKEN,
          "the " + header + " header holds control characters or is too long");
    }
    return decoded;
  }
}
