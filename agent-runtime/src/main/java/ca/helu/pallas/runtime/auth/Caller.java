package ca.helu.pallas.runtime.auth;

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
}
