package ca.helu.pallas.runtime.auth;

import com.nimbusds.jose.JOSEObjectType;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.jwk.source.JWKSource;
import com.nimbusds.jose.jwk.source.JWKSourceBuilder;
import com.nimbusds.jose.proc.BadJOSEException;
import com.nimbusds.jose.proc.DefaultJOSEObjectTypeVerifier;
import com.nimbusds.jose.proc.JWSVerificationKeySelector;
import com.nimbusds.jose.proc.SecurityContext;
import com.nimbusds.jose.util.ResourceRetriever;
import com.nimbusds.jose.util.health.HealthStatus;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.proc.BadJWTException;
import com.nimbusds.jwt.proc.DefaultJWTProcessor;
import com.nimbusds.jwt.proc.JWTClaimsSetVerifier;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.text.ParseException;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Validating signed JWTs against an issuer's key set (docs/runtime.md, "Inbound authentication"),
 * as {@link OidcTokens} (callers' tokens) and {@link ServiceAccountTokens} (agents' tokens) both
 * do: an asymmetric algorithm only, keys cached and fetched again for an unknown key id at most
 * every few seconds, cached keys kept while the key set cannot be fetched; and the tokens once
 * validated remembered by their digest until they expire.
 *
 * @param <T> what a validated token stands for
 */
final class SignedTokens<T> {
  private static final Logger LOG = LoggerFactory.getLogger(SignedTokens.class);

  /** Accepted clock difference between the issuer and this process. */
  static final Duration CLOCK_SKEW = Duration.ofSeconds(60);

  /** Keys are fetched again after this, or sooner for an unknown key id. */
  static final Duration KEYS_TTL = Duration.ofMinutes(5);

  /** The least time between two fetches of the key set (an unknown kid cannot make a storm). */
  static final Duration REFRESH_AT_MOST_EVERY = Duration.ofSeconds(10);

  /** Cached keys outlive an unreachable JWKS endpoint by this much. */
  static final Duration OUTAGE_TOLERANCE = Duration.ofHours(12);

  /** At most this many validated tokens are remembered; past it, the oldest are forgotten. */
  static final int VALIDATED_AT_MOST = 10_000;

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

  /** What a validated token stands for, and until when. */
  private record Validated<T>(T value, Instant until) {}

  /** Turns a token's checked claims into what it stands for. */
  @FunctionalInterface
  interface Reading<T> {
    T read(JWTClaimsSet claims) throws AuthFailure;
  }

  private final DefaultJWTProcessor<SecurityContext> processor;
  private final Reading<T> reading;

  /**
   * Tokens validated already, by their SHA-256 (the token itself is not kept), until they expire: a
   * client sends the same token on every call, and checking its signature and claims again each
   * time cost a call 40 % more CPU (docs/benchmarks.md, "Authentication and tracing"). A token's
   * signature, issuer, audience and times do not change; it stays valid to its {@code exp} as it
   * would be on its first check.
   */
  private final Map<String, Validated<T>> validated = new ConcurrentHashMap<>();

  /**
   * @param jwks where the issuer's keys are, read by {@code retriever}
   * @param problem told why the keys cannot be fetched, or null once they can
   * @param claims checks a signed token's claims; its message is the refusal's, so in our words
   * @param reading what a valid token stands for
   */
  SignedTokens(
      URL jwks,
      ResourceRetriever retriever,
      Duration timeout,
      Duration refreshAtMostEvery,
      Consumer<String> problem,
      JWTClaimsSetVerifier<SecurityContext> claims,
      Reading<T> reading) {
    JWKSource<SecurityContext> keys =
        JWKSourceBuilder.<SecurityContext>create(jwks, retriever)
            .cache(KEYS_TTL.toMillis(), timeout.toMillis())
            .rateLimited(refreshAtMostEvery.toMillis())
            .outageTolerant(OUTAGE_TOLERANCE.toMillis())
            .healthReporting(report ->
                problem.accept(
                    report.getHealthStatus() == HealthStatus.HEALTHY
                        ? null
                        : "the issuer's keys (" + jwks + ") cannot be fetched"))
            .build();
    processor = new DefaultJWTProcessor<>();
    // access tokens are typed JWT (Keycloak) or at+jwt (RFC 9068); an untyped one (a
    // ServiceAccount's) is accepted too
    processor.setJWSTypeVerifier(
        new DefaultJOSEObjectTypeVerifier<>(
            JOSEObjectType.JWT, new JOSEObjectType("at+jwt"), null));
    processor.setJWSKeySelector(new JWSVerificationKeySelector<>(ALGORITHMS, keys));
    processor.setJWTClaimsSetVerifier(claims);
    this.reading = reading;
  }

  /** What {@code token} stands for, validated now or remembered from an earlier validation. */
  T validate(String token) throws AuthFailure {
    String digest = digest(token);
    Validated<T> known = validated.get(digest);
    if (known != null) {
      if (Instant.now().isBefore(known.until())) {
        return known.value();
      }
      validated.remove(digest);
    }
    JWTClaimsSet claims = process(token);
    T value = reading.read(claims);
    remember(
        digest, new Validated<>(value, claims.getExpirationTime().toInstant().plus(CLOCK_SKEW)));
    return value;
  }

  private JWTClaimsSet process(String token) throws AuthFailure {
    try {
      return processor.process(token, null);
    } catch (ParseException e) {
      throw new AuthFailure(AuthFailure.Code.INVALID_TOKEN, "the token is not a signed JWT");
    } catch (BadJWTException e) {
      // only our claims verifier throws it: its message is ours
      throw new AuthFailure(AuthFailure.Code.INVALID_TOKEN, e.getMessage());
    } catch (BadJOSEException e) {
      throw new AuthFailure(
          AuthFailure.Code.INVALID_TOKEN, "the token's signature or algorithm is not accepted");
    } catch (com.nimbusds.jose.KeySourceException e) {
      LOG.debug("the issuer's keys cannot be fetched: {}", String.valueOf(e.getCause()));
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
  }

  private void remember(String digest, Validated<T> valid) {
    if (validated.size() >= VALIDATED_AT_MOST) {
      Instant now = Instant.now();
      validated.values().removeIf(v -> !now.isBefore(v.until()));
      if (validated.size() >= VALIDATED_AT_MOST) {
        validated.clear();
      }
    }
    validated.put(digest, valid);
  }

  /**
   * The claims every accepted token holds: {@code sub}, {@code exp}, {@code iss} equal to {@code
   * issuer}, {@code aud} containing {@code audience}, {@code exp} and {@code nbf} within {@link
   * #CLOCK_SKEW}. Checked by us, so that each refusal is in our words and none quotes the token's
   * values (it may be hostile).
   *
   * @param whose what the audience names, for the refusal ("this agent")
   */
  static void checkClaims(JWTClaimsSet claims, String issuer, String audience, String whose)
      throws BadJWTException {
    if (claims.getSubject() == null || claims.getExpirationTime() == null) {
      throw new BadJWTException("the token lacks a required claim (sub, exp)");
    }
    if (!issuer.equals(claims.getIssuer())) {
      throw new BadJWTException("the token is from another issuer (iss)");
    }
    if (claims.getAudience() == null || !claims.getAudience().contains(audience)) {
      throw new BadJWTException("the token is not meant for " + whose + " (aud)");
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

  /**
   * SHA-256 as a prototype to clone: looking the algorithm up among the security providers on every
   * call cost more than a tenth of the digest of a kilobyte's token (docs/benchmarks.md,
   * "Authentication and tracing").
   */
  private static final MessageDigest SHA_256;

  static {
    try {
      SHA_256 = MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every JDK", e);
    }
  }

  /** Hex SHA-256 of a token: the only form in which tokens are kept. */
  static String digest(String token) {
    MessageDigest sha256;
    try {
      sha256 = (MessageDigest) SHA_256.clone();
    } catch (CloneNotSupportedException e) {
      throw new IllegalStateException("the JDK's SHA-256 can be cloned", e);
    }
    return HexFormat.of().formatHex(sha256.digest(token.getBytes(StandardCharsets.UTF_8)));
  }
}
