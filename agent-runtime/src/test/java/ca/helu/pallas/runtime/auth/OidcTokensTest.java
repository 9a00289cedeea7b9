package ca.helu.pallas.runtime.auth;

import static org.assertj.core.api.Assertions.assertThat;

import com.nimbusds.jose.JOSEObjectType;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jose.crypto.RSASSASigner;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.jwk.gen.RSAKeyGenerator;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.PlainJWT;
import com.nimbusds.jwt.SignedJWT;
import com.sun.net.httpserver.HttpServer;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The validator against an issuer of the test's own (a real HTTP server with a discovery document
 * and a JWKS; tokens signed here, as only a unit test of the validator may): hostile tokens are
 * refused with our words, never the token's (issue 18 §5; docs/runtime.md, "Inbound
 * authentication"). KeycloakIT shows the same with a real issuer's tokens.
 */
class OidcTokensTest {
  private static final String AUDIENCE = "https://agents.example/helper";

  private HttpServer server;
  private String issuer;
  private final List<RSAKey> published = new CopyOnWriteArrayList<>();
  private final AtomicInteger jwksFetches = new AtomicInteger();
  private volatile boolean jwksDown;
  private RSAKey key;

  @BeforeEach
  void issuer() throws Exception {
    key = new RSAKeyGenerator(2048).keyID("k1").generate();
    published.add(key);
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    issuer = "http://127.0.0.1:" + server.getAddress().getPort() + "/realms/test";
    server.createContext(
        "/realms/test/.well-known/openid-configuration",
        exchange -> {
          byte[] body =
              ("{\"issuer\":\"" + issuer + "\",\"jwks_uri\":\"" + issuer + "/certs\"}")
                  .getBytes(StandardCharsets.UTF_8);
          exchange.getResponseHeaders().add("Content-Type", "application/json");
          exchange.sendResponseHeaders(200, body.length);
          exchange.getResponseBody().write(body);
          exchange.close();
        });
    server.createContext(
        "/realms/test/certs",
        exchange -> {
          jwksFetches.incrementAndGet();
          if (jwksDown) {
            exchange.sendResponseHeaders(503, -1);
            exchange.close();
            return;
          }
          byte[] body =
              new JWKSet(
                      published.stream()
                          .map(k -> (com.nimbusds.jose.jwk.JWK) k.toPublicJWK())
                          .toList())
                  .toString()
                  .getBytes(StandardCharsets.UTF_8);
          exchange.getResponseHeaders().add("Content-Type", "application/json");
          exchange.sendResponseHeaders(200, body.length);
          exchange.getResponseBody().write(body);
          exchange.close();
        });
    server.start();
  }

  @AfterEach
  void stop() {
    server.stop(0);
  }

  private OidcTokens tokens(Set<String> scopes) {
    return new OidcTokens(issuer, AUDIENCE, scopes, Duration.ofSeconds(2), Duration.ZERO);
  }

  private JWTClaimsSet.Builder claims() {
    Instant now = Instant.now();
    return new JWTClaimsSet.Builder()
        .issuer(issuer)
        .audience(List.of(AUDIENCE, "account"))
        .subject("alice")
        .claim("azp", "daedalus")
        .claim("scope", "openid agents:call")
        .issueTime(Date.from(now))
        .expirationTime(Date.from(now.plusSeconds(300)));
  }

  private String signed(RSAKey with, UnaryOperator<JWTClaimsSet.Builder> change) throws Exception {
    SignedJWT jwt =
        new SignedJWT(
            new JWSHeader.Builder(JWSAlgorithm.RS256)
                .keyID(with.getKeyID())
                .type(JOSEObjectType.JWT)
                .build(),
            change.apply(claims()).build());
    jwt.sign(new RSASSASigner(with));
    return jwt.serialize();
  }

  private String signed(UnaryOperator<JWTClaimsSet.Builder> change) throws Exception {
    return signed(key, change);
  }

  private static AuthFailure refused(Authenticator auth, String token) {
    try {
      auth.authenticate(token == null ? null : "Bearer " + token);
    } catch (AuthFailure e) {
      if (token != null && token.length() > 20) {
        assertThat(e.getMessage())
            .as("never quotes the token")
            .doesNotContain(token.substring(0, 20));
      }
      return e;
    }
    throw new AssertionError("accepted: " + token);
  }

  @Test
  void aValidTokenNamesItsCallerClientAndScopes() throws Exception {
    Caller caller = tokens(Set.of("agents:call")).authenticate("Bearer " + signed(b -> b));
    assertThat(caller.name()).isEqualTo("alice");
    assertThat(caller.client()).isEqualTo("daedalus");
    assertThat(caller.scopes()).contains("openid", "agents:call");
  }

  @Test
  void aRequestWithoutATokenIsAskedForOne() {
    AuthFailure e = refused(tokens(Set.of()), null);
    assertThat(e.code()).isEqualTo(AuthFailure.Code.NONE);
    assertThat(e.code().status()).isEqualTo(401);
    assertThat(e.code().error()).isNull();
  }

  @Test
  void expiredAndNotYetValidTokensAreRefusedBeyondTheClockSkew() throws Exception {
    Instant now = Instant.now();
    OidcTokens auth = tokens(Set.of());
    assertThat(
            refused(auth, signed(b -> b.expirationTime(Date.from(now.minusSeconds(120)))))
                .getMessage())
        .isEqualTo("the token has expired");
    assertThat(
            refused(auth, signed(b -> b.notBeforeTime(Date.from(now.plusSeconds(120)))))
                .getMessage())
        .isEqualTo("the token is not valid yet");
    // within the skew: accepted
    assertThat(
            auth.authenticate(
                    "Bearer " + signed(b -> b.expirationTime(Date.from(now.minusSeconds(10)))))
                .name())
        .isEqualTo("alice");
  }

  /**
   * A token validated once is taken from memory on later calls (docs/benchmarks.md, "Authentication
   * and tracing"), but never past its expiry: remembered, it is refused as soon as it would be on a
   * first check.
   */
  @Test
  void aRememberedTokenIsRefusedOnceItExpires() throws Exception {
    OidcTokens auth = tokens(Set.of());
    // expired 56 s ago: within the 60 s skew for 3 to 4 s more (a JWT's exp is in whole seconds,
    // so the second it names may have begun up to a second earlier: with one second left, a CI
    // run's first check came too late)
    String token =
        signed(b ->
            b.expirationTime(Date.from(Instant.now().minus(OidcTokens.CLOCK_SKEW).plusSeconds(4))));
    assertThat(auth.authenticate("Bearer " + token).name()).isEqualTo("alice");
    assertThat(auth.authenticate("Bearer " + token).name()).as("remembered").isEqualTo("alice");
    org.awaitility.Awaitility.await()
        .atMost(Duration.ofSeconds(10))
        .pollInterval(Duration.ofMillis(100))
        .untilAsserted(
            () -> assertThat(refused(auth, token).getMessage()).isEqualTo("the token has expired"));
  }

  @Test
  void aTokenOfAnotherIssuerOrForAnotherAudienceIsRefused() throws Exception {
    OidcTokens auth = tokens(Set.of());
    assertThat(refused(auth, signed(b -> b.issuer("https://evil.example"))).getMessage())
        .isEqualTo("the token is from another issuer (iss)");
    assertThat(refused(auth, signed(b -> b.audience("https://agents.example/other"))).getMessage())
        .isEqualTo("the token is not meant for this agent (aud)");
    assertThat(refused(auth, signed(b -> b.subject(null))).getMessage())
        .isEqualTo("the token lacks a required claim (sub, exp)");
  }

  @Test
  void algNoneAndAnHmacKeyedWithThePublicKeyAreRefused() throws Exception {
    OidcTokens auth = tokens(Set.of());
    String none = new PlainJWT(claims().build()).serialize();
    assertThat(refused(auth, none).code()).isEqualTo(AuthFailure.Code.INVALID_TOKEN);

    // the classic confusion: HS256 "signed" with the RSA public key the issuer publishes
    SignedJWT hmac =
        new SignedJWT(
            new JWSHeader.Builder(JWSAlgorithm.HS256).keyID("k1").build(), claims().build());
    hmac.sign(new MACSigner(key.toPublicJWK().toRSAPublicKey().getEncoded()));
    assertThat(refused(auth, hmac.serialize()).getMessage())
        .isEqualTo("the token's signature or algorithm is not accepted");
  }

  @Test
  void aTokenSignedByAnotherKeyIsRefusedAndAnUnknownKidFetchesTheKeysOnce() throws Exception {
    OidcTokens auth = tokens(Set.of());
    assertThat(auth.authenticate("Bearer " + signed(b -> b)).name()).isEqualTo("alice");
    int fetched = jwksFetches.get();

    RSAKey stranger = new RSAKeyGenerator(2048).keyID("k1").generate(); // same kid, other key
    assertThat(refused(auth, signed(stranger, b -> b)).code())
        .isEqualTo(AuthFailure.Code.INVALID_TOKEN);

    RSAKey rotated = new RSAKeyGenerator(2048).keyID("k2").generate();
    assertThat(refused(auth, signed(rotated, b -> b)).code())
        .isEqualTo(AuthFailure.Code.INVALID_TOKEN);
    assertThat(jwksFetches.get()).as("one fetch for the unknown kid").isEqualTo(fetched + 1);

    published.add(rotated); // the issuer rotates its keys
    assertThat(auth.authenticate("Bearer " + signed(rotated, b -> b)).name()).isEqualTo("alice");
  }

  @Test
  void truncatedGarbledAndOverlongTokensAreRefused() throws Exception {
    OidcTokens auth = tokens(Set.of());
    String good = signed(b -> b);
    assertThat(refused(auth, good.substring(0, good.length() - 10)).code())
        .isEqualTo(AuthFailure.Code.INVALID_TOKEN);
    assertThat(refused(auth, good.substring(0, good.lastIndexOf('.'))).getMessage())
        .isEqualTo("the token is not a signed JWT");
    assertThat(refused(auth, "not.a.jwt").code()).isEqualTo(AuthFailure.Code.INVALID_TOKEN);
    String long64k = "a".repeat(64 * 1024);
    assertThat(refused(auth, long64k).getMessage())
        .isEqualTo("the bearer token is longer than 16384 characters");
  }

  @Test
  void aMissingScopeIsForbiddenNamingTheScope() throws Exception {
    AuthFailure e = refused(tokens(Set.of("agents:call", "agents:admin")), signed(b -> b));
    assertThat(e.code()).isEqualTo(AuthFailure.Code.INSUFFICIENT_SCOPE);
    assertThat(e.code().status()).isEqualTo(403);
    assertThat(e.getMessage()).isEqualTo("the token lacks the scope agents:admin");
  }

  @Test
  void cachedKeysOutliveAnUnreachableJwksEndpoint() throws Exception {
    OidcTokens auth = tokens(Set.of());
    assertThat(auth.authenticate("Bearer " + signed(b -> b)).name()).isEqualTo("alice");
    jwksDown = true;
    assertThat(auth.authenticate("Bearer " + signed(b -> b.subject("bob"))).name())
        .isEqualTo("bob");
  }

  @Test
  void withoutAnyKeyEveryTokenIsRefusedAndTheProblemIsNamed() throws Exception {
    jwksDown = true;
    OidcTokens auth = tokens(Set.of());
    AuthFailure e = refused(auth, signed(b -> b));
    assertThat(e.code()).isEqualTo(AuthFailure.Code.INVALID_TOKEN);
    assertThat(e.getMessage()).startsWith("the token cannot be validated now");
    assertThat(auth.problem()).hasValueSatisfying(p -> assertThat(p).contains("keys"));
  }

  @Test
  void anUnreachableIssuerFailsClosedAndIsNamed() throws Exception {
    String token = signed(b -> b);
    server.stop(0);
    OidcTokens auth = tokens(Set.of());
    assertThat(refused(auth, token).getMessage()).startsWith("the token cannot be validated now");
    assertThat(auth.problem()).hasValueSatisfying(p -> assertThat(p).contains("cannot be reached"));
  }
}
