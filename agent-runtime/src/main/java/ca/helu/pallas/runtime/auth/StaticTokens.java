package ca.helu.pallas.runtime.auth;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * Static bearer tokens, each with a name that becomes the caller's identity (docs/runtime.md,
 * "Inbound authentication"). A presented token is compared with every configured one in constant
 * time (their SHA-256 digests, so that neither the length nor the content of a configured token
 * shows in the time an answer takes), and the tokens are held only as digests.
 */
public final class StaticTokens implements Authenticator {
  private final Map<String, byte[]> digests = new LinkedHashMap<>();

  /**
   * @param tokens by name
   */
  public StaticTokens(Map<String, String> tokens) {
    tokens.forEach((name, token) -> {
      if (token == null || token.isBlank()) {
        throw new IllegalArgumentException("static token '" + name + "' is empty");
      }
      digests.put(name, sha256(token.strip()));
    });
    if (digests.isEmpty()) {
      throw new IllegalArgumentException("no static tokens are configured");
    }
  }

  /** The callers' names (never their tokens). */
  public java.util.Set<String> names() {
    return java.util.Collections.unmodifiableSet(digests.keySet());
  }

  @Override
  public Caller authenticate(String authorization) throws AuthFailure {
    String token = BearerTokens.required(authorization);
    byte[] presented = sha256(token);
    String match = null;
    for (Map.Entry<String, byte[]> e : digests.entrySet()) {
      // every configured token is compared, a match or not
      if (MessageDigest.isEqual(presented, e.getValue()) && match == null) {
        match = e.getKey();
      }
    }
    if (match == null) {
      throw new AuthFailure(AuthFailure.Code.INVALID_TOKEN, "the bearer token is not known");
    }
    return new Caller(match, null, Set.of());
  }

  /** The SHA-256 of a token, the only form in which a configured token is held. */
  static byte[] sha256(String token) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("this JVM has no SHA-256", e);
    }
  }
}
