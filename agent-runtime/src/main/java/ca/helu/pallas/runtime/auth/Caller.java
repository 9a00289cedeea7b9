package ca.helu.pallas.runtime.auth;

import jakarta.servlet.ServletRequest;
import java.util.Set;

/**
 * Who calls an agent (docs/runtime.md, "Inbound authentication"): the token's subject, or the name
 * of a static token; the OAuth client it came through, where the token says; its scopes.
 *
 * @param name the caller's identity: a JWT's {@code sub}, or a static token's name
 * @param client the OAuth client ({@code azp} or {@code client_id}), or null
 */
public record Caller(String name, String client, Set<String> scopes) {
  /** The request attribute the MCP edge sets to the authenticated caller. */
  public static final String ATTRIBUTE = "pallas.caller";

  public Caller {
    scopes = Set.copyOf(scopes);
  }

  /** The name of the caller a request was authenticated as; null when it carries no token. */
  public static String nameOf(ServletRequest request) {
    return request.getAttribute(ATTRIBUTE) instanceof Caller c ? c.name() : null;
  }
}
