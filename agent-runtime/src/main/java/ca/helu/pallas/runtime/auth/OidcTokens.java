package ca.helu.pallas.runtime.auth;

import com.nimbusds.jose.util.DefaultResourceRetriever;
import com.nimbusds.jwt.JWTClaimsSet;
import java.io.IOException;
import java.net.URL;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * OAuth 2.1 resource server (docs/runtime.md, "Inbound authentication"; the MCP authorization
 * specification): bearer JWTs are validated against the issuer's discovery document and its JWKS —
 * the signature with an asymmetric algorithm the key set allows (never {@code none}, never an HMAC
 * keyed with a public key), {@code iss}, {@code aud} containing the agent's resource identifier,
 * {@code exp} and {@code nbf} within a small clock skew, and the required scopes.
 *
 * <p>Keys are cached and fetched again when a token names a key id the cache does not hold (at most
 * once every {@link SignedTokens#REFRESH_AT_MOST_EVERY}); while the JWKS endpoint is down, the
 * cached keys keep working. Without a key, every token is refused (fail closed) and {@link
 * #problem()} says why, for get_health. The discovery document is read on first use, and again
 * after a failure, so an agent starts while its issuer is down.
 */
public final class OidcTokens implements Authenticator {
  private static final Logger LOG = LoggerFactory.getLogger(OidcTokens.class);

  /** Accepted clock difference between the issuer and this process. */
  static final Duration CLOCK_SKEW = SignedTokens.CLOCK_SKEW;

  private final String issuer;
  private final String audience;
  private final Set<String> requiredScopes;
  private final Duration timeout;
  private final Duration refreshAtMostEvery;
  private final HttpClient http;
  private volatile SignedTokens<Caller> tokens;
  private volatile String problem;

  /**
   * @param issuer the issuer's identifier, exactly as its tokens' {@code iss} (e.g.
   *     https://keycloak.example/realms/pallas)
   * @param audience the agent's resource identifier, which a token's {@code aud} must contain
   * @param requiredScopes scopes every token must carry (none: any)
   * @param timeout for each request to the issuer
   */
  public OidcTokens(String issuer, String audience, Set<String> requiredScopes, Duration timeout) {
    this(issuer, audience, requiredScopes, timeout, SignedTokens.REFRESH_AT_MOST_EVERY);
  }

  /** As above, the key set fetched at most every {@code refreshAtMostEvery} (tests shorten it). */
  OidcTokens(
      String issuer,
      String audience,
      Set<String> requiredScopes,
      Duration timeout,
      Duration refreshAtMostEvery) {
    this.refreshAtMostEvery = refreshAtMostEvery;
    this.issuer = IssuerMetadata.normalized(issuer);
    this.audience = audience;
    this.requiredScopes = Set.copyOf(requiredScopes);
    this.timeout = timeout;
    this.http = HttpClient.newBuilder().connectTimeout(timeout).build();
    this.problem = "the issuer " + this.issuer + " has not been reached yet";
  }

  /** Why tokens cannot be validated now (issuer or keys unreachable), or empty. */
  public Optional<String> problem() {
    return Optional.ofNullable(problem);
  }

  /** Reads the discovery document now, if it has not been read; returns whether it has. */
  public boolean discover() {
    return tokens() != null;
  }

  @Override
  public Caller authenticate(String authorization) throws AuthFailure {
    String token = BearerTokens.required(authorization);
    SignedTokens<Caller> signed = tokens();
    if (signed == null) {
      // fail closed: without the issuer's keys no token is valid
      throw new AuthFailure(
          AuthFailure.Code.INVALID_TOKEN, "the token cannot be validated now: " + problem);
    }
    return signed.validate(token);
  }

  /** The caller a token's checked claims name, with every required scope, or a refusal. */
  private Caller caller(JWTClaimsSet claims) throws AuthFailure {
    Set<String> scopes = scopes(claims);
    if (!scopes.containsAll(requiredScopes)) {
      Set<String> missing = new LinkedHashSet<>(requiredScopes);
      missing.removeAll(scopes);
      throw new AuthFailure(
          AuthFailure.Code.INSUFFICIENT_SCOPE,
          "the token lacks the scope " + String.join(" ", missing));
    }
    return new Caller(claims.getSubject(), client(claims), scopes);
  }

  private static Set<String> scopes(JWTClaimsSet claims) {
    Object scope = claims.getClaim("scope");
    if (scope instanceof String s && !s.isBlank()) {
      return new LinkedHashSet<>(Arrays.asList(s.strip().split("\\s+")));
    }
    if (scope instanceof List<?> list) {
      Set<String> all = new LinkedHashSet<>();
      list.forEach(o -> all.add(String.valueOf(o)));
      return all;
    }
    return Set.of();
  }

  private static String client(JWTClaimsSet claims) {
    for (String name : List.of("azp", "client_id")) {
      Object value = claims.getClaim(name);
      if (value instanceof String s && !s.isBlank()) {
        return s;
      }
    }
    return null;
  }

  /** The validation, set up from the discovery document once it has been read; null until then. */
  private SignedTokens<Caller> tokens() {
    SignedTokens<Caller> ready = tokens;
    if (ready != null) {
      return ready;
    }
    synchronized (this) {
      if (tokens == null) {
        try {
          URL jwks = IssuerMetadata.read(issuer, http, timeout).jwksUri().toURL();
          int millis = (int) timeout.toMillis();
          tokens =
              new SignedTokens<>(
                  jwks,
                  new DefaultResourceRetriever(millis, millis, 512 * 1024),
                  timeout,
                  refreshAtMostEvery,
                  why -> problem = why,
                  (claims, context) ->
                      SignedTokens.checkClaims(claims, issuer, audience, "this agent"),
                  this::caller);
          problem = null;
          LOG.info("inbound auth: tokens of {} for audience {}", issuer, audience);
        } catch (IOException | RuntimeException e) {
          problem = "the issuer " + issuer + " cannot be reached (" + e.getMessage() + ")";
          LOG.warn("inbound auth: {}", problem);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return tokens;
    }
  }
}
