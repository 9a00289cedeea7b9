package ca.helu.pallas.runtime.auth;

import jakarta.servlet.ServletRequest;
import java.util.Set;

/**
 * Who calls an agent (docs/runtime.md, "Inbound authentication"): the token's subject, or the name
 * of a static token; the OAuth client it came through, where the token says; its scopes. A call
 * that another agent of the fleet makes for its own caller names that caller, carried by the agent,
 * and the agent it came through ({@code via}; docs/runtime.md, "Agents calling agents").
 *
 * @param name the caller's identity: a JWT's {@code sub}, a static token's name, or the one an
 *     agent of the fleet carried
 * @param client the OAuth client ({@code azp} or {@code client_id}), or null
 * @param via the agent of this fleet the call came through, whose own identity was checked, or null
 *     when the caller called directly
 */
public record Caller(String name, String client, Set<String> scopes, String via) {
  /** The request attribute the MCP edge sets to the authenticated caller. */
  public static final String ATTRIBUTE = "pallas.caller";

  public Caller {
    scopes = Set.copyOf(scopes);
  }

  /** A caller who called the agent directly. */
  public Caller(String name, String client, Set<String> scopes) {
    this(name, client, scopes, null);
  }

  /**
   * Who owns what the request opens (its MCP session): the caller, or for a call through another
   * agent that agent, whose one session to this agent carries all of its callers' calls.
   */
  public String principal() {
    return via == null ? name : "agent:" + via;
  }

  /** The principal a request was authenticated as; null when it carries no token. */
  public static String nameOf(ServletRequest request) {
    return request.getAttribute(ATTRIBUTE) instanceof Caller c ? c.principal() : null;
  }
}
