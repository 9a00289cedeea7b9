package ca.helu.pallas.runtime.auth;

import com.nimbusds.jose.JOSEObjectType;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.jwk.source.JWKSource;
import com.nimbusds.jose.jwk.source.JWKSourceBuilder;
import com.nimbusds.jose.proc.BadJOSEException;
import com.nimbusds.jose.proc.DefaultJOSEObjectTypeVerifier;
import com.nimbusds.jose.proc.JWSVerificationKeySelector;
import com.nimbusds.jose.proc.SecurityContext;
import com.nimbusds.jose.util.DefaultResourceRetriever;
import com.nimbusds.jose.util.health.HealthStatus;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.proc.BadJWTException;
import com.nimbusds.jwt.proc.DefaultJWTProcessor;
import java.io.IOException;
import java.net.URL;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.text.ParseException;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
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
 * once every {@link #REFRESH_AT_MOST_EVERY}); while the JWKS endpoint is down, the cached keys keep
 * working. Without a key, every token is refused (fail closed) and {@link #problem()} says why, for
 * get_health. The discovery document is read on first use, and again after a failure, so an agent
 * starts while its issuer is down.
 */
public final class OidcTokens implements Authenticator {
  private static final Logger LOG = LoggerFactory.getLogger(OidcTokens.class);

  /** Accepted clock difference between the issuer and this process. */
  static final Duration CLOCK_SKEW = Duration.ofSeconds(60);

  /** Keys are fetched again after this, or sooner for an unknown key id. */
  static final Duration KEYS_TTL = Duration.ofMinutes(5);

  /** The least time between two fetches of the key set (an unknown kid cannot make a storm). */
  static final Duration REFRESH_AT_MOST_EVERY = Duration.ofSeconds(10);

  /** Cached keys outlive an unreachable JWKS endpoint by this much. */
  static final Duration OUTAGE_TOLERANCE = Duration.ofHours(12);

  private static final Set<JWSAlgorithm> ALGORITHMS =
      Set.of(
          JWSAlgorithm.RS256,
          JWSAlgorithm.RS384,
          JWSAlgorithm.RS512,
          JWSAlgorithm.PS256,
          JWSAlgorithm.PS384,
          JWSAlgorithm.PS512,
          JWSAlgorithm.ES256,
          JWSAlgorithm.ES384,
          JWSAlgorithm.ES512,
          JWSAlgorithm.EdDSA,
          JWSAlgorithm.Ed25519);

  private final String issuer;
  private final String audience;
  private final Set<String> requiredScopes;
  private final Duration timeout;
  private final Duration refreshAtMostEvery;
  private final HttpClient http;
  private volatile DefaultJWTProcessor<SecurityContext> processor;
  private volatile String problem;

  /**
   * Tokens validated already, by their SHA-256 (the token itself is not kept), until they expire: a
   * client sends the same token on every call, and checking its signature and claims again each
   * time cost a call 40 % more CPU (docs/benchmarks.md, "Authentication and tracing"). A token's
   * signature, issuer, audience and times do not change; it stays valid to its {@code exp} as it
   * would be on its first check.
   */
  private final Map<String, Validated> validated = new ConcurrentHashMap<>();

  /** At most this many validated tokens are remembered; past it, the oldest are forgotten. */
  static final int VALIDATED_AT_MOST = 10_000;

  private record Validated(Caller caller, Instant until) {}

  /**
   * @param issuer the issuer's identifier, exactly as its tokens' {@code iss} (e.g.
   *     https://keycloak.example/realms/pallas)
   * @param audience the agent's resource identifier, which a token's {@code aud} must contain
   * @param requiredScopes scopes every token must carry (none: any)
   * @param timeout for each request to the issuer
   */
  public OidcTokens(String issuer, String audience, Set<String> requiredScopes, Duration timeout) {
    this(issuer, audience, requiredScopes, timeout, REFRESH_AT_MOST_EVERY);
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
    return processor() != null;
  }

  @Override
  public Caller authenticate(String authorization) throws AuthFailure {
    String token = BearerTokens.required(authorization);
    String digest = digest(token);
    Validated known = validated.get(digest);
    if (known != null) {
      if (Instant.now().isBefore(known.until())) {
        return known.caller();
      }
      validated.remove(digest);
    }
    Validated valid = validate(token);
    remember(digest, valid);
    return valid.caller();
  }

  private Validated validate(String token) throws AuthFailure {
    DefaultJWTProcessor<SecurityContext> jwt = processor();
    if (jwt == null) {
      // fail closed: without the issuer's keys no token is valid
      throw new AuthFailure(
          AuthFailure.Code.INVALID_TOKEN, "the token cannot be validated now: " + problem);
    }
    JWTClaimsSet claims;
    try {
      claims = jwt.process(token, null);
    } catch (ParseException e) {
      throw new AuthFailure(AuthFailure.Code.INVALID_TOKEN, "the token is not a signed JWT");
    } catch (BadJWTException e) {
      // only our verify() throws it: its message is ours
      throw new AuthFailure(AuthFailure.Code.INVALID_TOKEN, e.getMessage());
    } catch (BadJOSEException e) {
      throw new AuthFailure(
          AuthFailure.Code.INVALID_TOKEN, "the token's signature or algorithm is not accepted");
    } catch (com.nimbusds.jose.KeySourceException e) {
      throw new AuthFailure(
          AuthFailure.Code.INVALID_TOKEN,
          "the token cannot be validated now: the issuer's keys cannot be fetched");
    } catch (com.nimbusds.jose.JOSEException e) {
      throw new AuthFailure(
          AuthFailure.Code.INVALID_TOKEN, "the token's signature cannot be checked");
    } catch (RuntimeException e) {
      // e.g. a key source failure surfacing unchecked: never valid, never a stack trace upward
      LOG.debug("token validation failed: {}", e.toString());
      throw new AuthFailure(AuthFailure.Code.INVALID_TOKEN, "the token cannot be validated");
    }
    Set<String> scopes = scopes(claims);
    if (!scopes.containsAll(requiredScopes)) {
      Set<String> missing = new LinkedHashSet<>(requiredScopes);
      missing.removeAll(scopes);
      throw new AuthFailure(
          AuthFailure.Code.INSUFFICIENT_SCOPE,
          "the token lacks the scope " + String.join(" ", missing));
    }
    return new Validated(
        new Caller(claims.getSubject(), client(claims), scopes),
        claims.getExpirationTime().toInstant().plus(CLOCK_SKEW));
  }

  private void remember(String digest, Validated valid) {
    if (validated.size() >= VALIDATED_AT_MOST) {
      Instant now = Instant.now();
      validated.values().removeIf(v -> !now.isBefore(v.until()));
      if (validated.size() >= VALIDATED_AT_MOST) {
        validated.clear();
      }
    }
    validated.put(digest, valid);
  }

  private static String digest(String token) {
    try {
      return HexFormat.of()
          .formatHex(
              MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every JDK", e);
    }
  }

  /**
   * The claims a signed token must hold, checked by us so that each refusal is in our words and
   * none quotes the token's values (it may be hostile).
   */
  private void verify(JWTClaimsSet claims) throws BadJWTException {
    if (claims.getSubject() == null || claims.getExpirationTime() == null) {
      throw new BadJWTException("the token lacks a required claim (sub, exp)");
    }
    if (!issuer.equals(claims.getIssuer())) {
      throw new BadJWTException("the token is from another issuer (iss)");
    }
    if (claims.getAudience() == null || !claims.getAudience().contains(audience)) {
      throw new BadJWTException("the token is not meant for this agent (aud)");
    }
    Instant now = Instant.now();
    if (claims.getExpirationTime().toInstant().plus(CLOCK_SKEW).isBefore(now)) {
      throw new BadJWTException("the token has expired");
    }
    if (claims.getNotBeforeTime() != null
        && claims.getNotBeforeTime().toInstant().minus(CLOCK_SKEW).isAfter(now)) {
      throw new BadJWTException("the token is not valid yet");
    }
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

  /** The processor, set up from the discovery document once it has been read; null until then. */
  private DefaultJWTProcessor<SecurityContext> processor() {
    DefaultJWTProcessor<SecurityContext> ready = processor;
    if (ready != null) {
      return ready;
    }
    synchronized (this) {
      if (processor == null) {
        try {
          processor = build(IssuerMetadata.read(issuer, http, timeout).jwksUri().toURL());
        } catch (IOException | RuntimeException e) {
          problem = "the issuer " + issuer + " cannot be reached (" + e.getMessage() + ")";
          LOG.warn("inbound auth: {}", problem);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return processor;
    }
  }

  private DefaultJWTProcessor<SecurityContext> build(URL jwks) {
    int millis = (int) timeout.toMillis();
    JWKSource<SecurityContext> keys =
        JWKSourceBuilder.<SecurityContext>create(
                jwks, new DefaultResourceRetriever(millis, millis, 512 * 1024))
            .cache(KEYS_TTL.toMillis(), timeout.toMillis())
            .rateLimited(refreshAtMostEvery.toMillis())
            .outageTolerant(OUTAGE_TOLERANCE.toMillis())
            .healthReporting(report -> {
              if (report.getHealthStatus() == HealthStatus.HEALTHY) {
                problem = null;
              } else {
                problem = "the issuer's keys (" + jwks + ") cannot be fetched";
              }
            })
            .build();
    DefaultJWTProcessor<SecurityContext> jwt = new DefaultJWTProcessor<>();
    // access tokens are typed JWT (Keycloak) or at+jwt (RFC 9068); an untyped one is accepted too
    jwt.setJWSTypeVerifier(
        new DefaultJOSEObjectTypeVerifier<>(
            JOSEObjectType.JWT, new JOSEObjectType("at+jwt"), null));
    jwt.setJWSKeySelector(new JWSVerificationKeySelector<>(ALGORITHMS, keys));
    jwt.setJWTClaimsSetVerifier((claims, context) -> verify(claims));
    problem = null;
    LOG.info("inbound auth: tokens of {} for audience {}", issuer, audience);
    return jwt;
  }
}
