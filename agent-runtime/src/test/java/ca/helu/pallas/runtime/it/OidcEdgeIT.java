package ca.helu.pallas.runtime.it;

import static org.assertj.core.api.Assertions.assertThat;

import ca.helu.pallas.runtime.testing.AuthProbe;
import ca.helu.pallas.runtime.testing.KeycloakServer;
import ca.helu.pallas.runtime.testing.LogCapture;
import ca.helu.pallas.runtime.testing.McpClients;
import ca.helu.pallas.runtime.testing.RawMcp;
import ca.helu.pallas.runtime.testing.RunningFleet;
import com.fasterxml.jackson.databind.JsonNode;
import com.nimbusds.jose.JOSEObjectType;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jose.crypto.RSASSASigner;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.jwk.gen.RSAKeyGenerator;
import com.nimbusds.jose.util.Base64URL;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.spec.McpSchema;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * OIDC at a served fleet's edge with a real issuer (issue 18 §1, §5, §6): Keycloak's tokens, from
 * the realm in src/test/resources/keycloak, call an agent through the official MCP client; a call
 * without a token learns where the agent's Protected Resource Metadata is, and that document names
 * the issuer; a token meant for another agent, one lacking a scope, and the hostile tokens of §5
 * are refused with 401 or 403, and none of them is logged; through the registry, an agent takes
 * only a token that names it. The hostile tokens are made here from a real token and the issuer's
 * public keys, as an attacker could; those that need the issuer's private key (expired, not yet
 * valid, another issuer with a valid signature) are OidcTokensTest's.
 */
class OidcEdgeIT {
  @RegisterExtension static final KeycloakServer KEYCLOAK = new KeycloakServer();

  private static final String FLEET =
      """
      apiVersion: pallas.helu.ca/v1alpha1
      kind: PallasDeployment
      metadata: {name: NAME}
      spec:
        host: 127.0.0.1
        registry: {port: ${port:registry}}
        defaultModel: passthrough
        agents: [{name: helper, port: ${port:helper}}, {name: other, port: ${port:other}}]
        auth:
          oidc:
            issuerUrl: ISSUER
            audience: https://agents.pallas.test/{agent}
            requiredScopes: SCOPES
      """;

  private static RunningFleet fleet;
  private static RunningFleet strict;
  private static RunningFleet unreachable;

  private static String manifest(String name, String issuer, String scopes) {
    return FLEET.replace("NAME", name).replace("ISSUER", issuer).replace("SCOPES", scopes);
  }

  @BeforeAll
  static void start() {
    fleet = RunningFleet.start(manifest("secured", KEYCLOAK.issuer(), "[agents:call]"));
    strict =
        RunningFleet.start(manifest("strict", KEYCLOAK.issuer(), "[agents:call, agents:admin]"));
    unreachable =
        RunningFleet.start(
            manifest("lost", "http://127.0.0.1:" + RunningFleet.unboundPort() + "/realms/x", "[]"));
  }

  @AfterAll
  static void stop() {
    fleet.close();
    strict.close();
    unreachable.close();
  }

  private static String daedalus() {
    return KEYCLOAK.clientToken("daedalus", "daedalus-secret");
  }

  @Test
  void daedalusCallsTheAgentWithAClientCredentialsToken() {
    try (McpSyncClient client = McpClients.connect(fleet.mcpUrl("helper"), daedalus(), n -> {})) {
      var result = McpClients.send(client, "send_message", "hello from daedalus");
      assertThat(result.isError()).isFalse();
      assertThat(McpClients.text(result)).contains("hello from daedalus");
    }
  }

  @Test
  void withoutATokenTheClientLearnsWhereTheMetadataIsAndItNamesTheIssuer() throws Exception {
    HttpResponse<String> refused = AuthProbe.sendMessage(fleet.mcpUrl("helper"), null);
    assertThat(refused.statusCode()).isEqualTo(401);
    String challenge = refused.headers().firstValue("WWW-Authenticate").orElseThrow();
    String metadataUrl = AuthProbe.metadataUrl(fleet.mcpUrl("helper"));
    assertThat(challenge)
        .isEqualTo("Bearer resource_metadata=\"" + metadataUrl + "\", scope=\"agents:call\"");

    JsonNode metadata = AuthProbe.json(AuthProbe.get(metadataUrl));
    assertThat(metadata.path("resource").asText()).isEqualTo(fleet.mcpUrl("helper"));
    assertThat(metadata.path("authorization_servers").toString())
        .isEqualTo("[\"" + KEYCLOAK.issuer() + "\"]");
    assertThat(metadata.path("scopes_supported").toString()).isEqualTo("[\"agents:call\"]");
    assertThat(metadata.path("bearer_methods_supported").toString()).isEqualTo("[\"header\"]");
    // the issuer it names is one a client can discover
    HttpResponse<String> discovery =
        AuthProbe.get(
            metadata.path("authorization_servers").get(0).asText()
                + "/.well-known/openid-configuration");
    assertThat(AuthProbe.json(discovery).path("issuer").asText()).isEqualTo(KEYCLOAK.issuer());
  }

  @Test
  void aTokenForAnotherAudienceIsRefused() throws Exception {
    for (var refused :
        new HttpResponse<?>[] {
          AuthProbe.sendMessage(
              fleet.mcpUrl("helper"),
              "Bearer " + KEYCLOAK.clientToken("stranger", "stranger-secret")),
          // daedalus's tokens name the helper, not the other agent of the same fleet
          AuthProbe.sendMessage(fleet.mcpUrl("other"), "Bearer " + daedalus())
        }) {
      assertThat(refused.statusCode()).isEqualTo(401);
      assertThat(refused.headers().firstValue("WWW-Authenticate").orElseThrow())
          .contains(
              "error=\"invalid_token\"",
              "error_description=\"the token is not meant for this agent (aud)\"");
    }
  }

  /**
   * The registry's call_tool passes the caller's token on to the agent it calls (docs/runtime.md,
   * "The registry's MCP endpoint"): daedalus's tokens name the registry and the helper, so the
   * helper answers; they do not name the other agent, which refuses, and the call says so without
   * the token. A token not meant for the registry is refused at its own edge.
   */
  @Test
  void throughTheRegistryAnAgentAcceptsOnlyATokenWithItsAudience() throws Exception {
    String registry = fleet.registryBase() + "/mcp";
    String token = daedalus();
    try (LogCapture log = new LogCapture();
        McpSyncClient client = McpClients.connect(registry, token, n -> {})) {
      McpSchema.CallToolResult answered = callThrough(client, "helper/send_message");
      assertThat(answered.isError()).as(McpClients.text(answered)).isFalse();
      assertThat(McpClients.text(answered)).contains("through the registry");

      McpSchema.CallToolResult refused = callThrough(client, "other/send_message");
      assertThat(refused.isError()).isTrue();
      assertThat(McpClients.text(refused))
          .isEqualTo(
              "other/send_message got no answer: answered HTTP 401 (invalid_token: the token is"
                  + " not meant for this agent (aud))");
      assertThat(log.lines()).noneMatch(line -> line.contains(token));
    }
    HttpResponse<String> stranger =
        AuthProbe.post(
            registry,
            "Bearer " + KEYCLOAK.clientToken("stranger", "stranger-secret"),
            "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":"
                + "\"call_tool\",\"arguments\":{\"name\":\"helper/send_message\"}}}");
    assertThat(stranger.statusCode()).isEqualTo(401);
    assertThat(stranger.headers().firstValue("WWW-Authenticate").orElseThrow())
        .contains("error=\"invalid_token\"");
  }

  private static McpSchema.CallToolResult callThrough(McpSyncClient client, String tool) {
    return client.callTool(
        new McpSchema.CallToolRequest(
            "call_tool",
            Map.of("name", tool, "arguments", Map.of("message", "through the registry"))));
  }

  @Test
  void aMissingScopeIsForbiddenNamingTheScopes() throws Exception {
    HttpResponse<String> refused =
        AuthProbe.sendMessage(strict.mcpUrl("helper"), "Bearer " + daedalus());
    assertThat(refused.statusCode()).isEqualTo(403);
    assertThat(refused.headers().firstValue("WWW-Authenticate").orElseThrow())
        .contains("error=\"insufficient_scope\"", "scope=\"agents:call agents:admin\"");
    assertThat(AuthProbe.json(refused).path("error").path("message").asText())
        .isEqualTo("Forbidden: the token lacks the scope agents:admin");
  }

  @Test
  void hostileTokensAreRefusedCleanlyAndNeverLogged() throws Exception {
    Map<String, String> hostile = hostileTokens(daedalus());
    String url = fleet.mcpUrl("helper");
    try (LogCapture log = new LogCapture()) {
      hostile.forEach((what, token) -> {
        try {
          HttpResponse<String> refused = AuthProbe.sendMessage(url, "Bearer " + token);
          assertThat(refused.statusCode()).as(what).isEqualTo(401);
          assertThat(refused.headers().firstValue("WWW-Authenticate").orElseThrow())
              .as(what)
              .contains("error=\"invalid_token\"");
          assertThat(AuthProbe.json(refused).path("error").path("code").asInt()).isEqualTo(-32001);
          assertThat(refused.body()).as(what).doesNotContain("Exception", "at com.", token);
        } catch (Exception e) {
          throw new AssertionError(what, e);
        }
      });
      String real = daedalus();
      HttpResponse<String> query =
          AuthProbe.post(
              url + "?access_token=" + real,
              null,
              "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
                  + "\"send_message\",\"arguments\":{\"message\":\"hi\"}}}");
      assertThat(query.statusCode()).as("a token only in the query string").isEqualTo(401);
      hostile.put("the query string's", real);
      assertThat(log.lines()).isNotEmpty();
      hostile.forEach((what, token) -> {
        String signature = token.substring(token.lastIndexOf('.') + 1);
        String telltale = signature.length() >= 16 ? signature : token;
        assertThat(log.lines())
            .as("the " + what + " token is never logged")
            .noneMatch(l -> l.contains(telltale.substring(0, Math.min(40, telltale.length()))));
      });
    }
  }

  @Test
  void withoutTheIssuersKeysEveryTokenIsRefusedAndGetHealthSaysWhy() throws Exception {
    HttpResponse<String> refused =
        AuthProbe.sendMessage(unreachable.mcpUrl("helper"), "Bearer " + daedalus());
    assertThat(refused.statusCode()).isEqualTo(401);
    assertThat(AuthProbe.json(refused).path("error").path("message").asText())
        .startsWith("Unauthorized: the token cannot be validated now: the issuer");
    String health =
        RawMcp.text(
            RawMcp.open(unreachable.mcpUrl("helper"), null).callTool("get_health", Map.of()));
    assertThat(health).contains("\"status\":\"degraded\"", "Inbound auth: the issuer");
    assertThat(
            RawMcp.text(RawMcp.open(fleet.mcpUrl("helper"), null).callTool("get_health", Map.of())))
        .as("with its issuer reachable, an agent is healthy")
        .doesNotContain("Inbound auth");
  }

  /**
   * Tokens an attacker can make from a real one and the issuer's public keys: by what they are,
   * each refused.
   */
  private static Map<String, String> hostileTokens(String real) throws Exception {
    SignedJWT jwt = SignedJWT.parse(real);
    JWTClaimsSet claims = jwt.getJWTClaimsSet();
    String kid = jwt.getHeader().getKeyID();
    RSAKey issuerKey =
        (RSAKey)
            JWKSet.load(URI.create(KEYCLOAK.issuer() + "/protocol/openid-connect/certs").toURL())
                .getKeyByKeyId(kid);
    RSAKey ours = new RSAKeyGenerator(2048).keyID(kid).generate();
    RSAKey unknown = new RSAKeyGenerator(2048).keyID("not-a-key-of-the-issuer").generate();
    Date past = Date.from(Instant.now().minusSeconds(3600));
    Date future = Date.from(Instant.now().plusSeconds(3600));

    Map<String, String> tokens = new LinkedHashMap<>();
    tokens.put(
        "alg none",
        Base64URL.encode("{\"alg\":\"none\",\"typ\":\"JWT\"}".getBytes(StandardCharsets.UTF_8))
            + "."
            + jwt.getParsedParts()[1]
            + ".");
    SignedJWT hmac =
        new SignedJWT(
            new JWSHeader.Builder(JWSAlgorithm.HS256).keyID(kid).type(JOSEObjectType.JWT).build(),
            claims);
    hmac.sign(new MACSigner(issuerKey.toRSAPublicKey().getEncoded()));
    tokens.put("HS256 keyed with the issuer's public key", hmac.serialize());
    tokens.put("unknown kid", sign(unknown, claims));
    tokens.put(
        "expired (not signed by the issuer)",
        sign(ours, new JWTClaimsSet.Builder(claims).expirationTime(past).build()));
    tokens.put(
        "not yet valid (not signed by the issuer)",
        sign(ours, new JWTClaimsSet.Builder(claims).notBeforeTime(future).build()));
    tokens.put(
        "another issuer (not signed by the issuer)",
        sign(ours, new JWTClaimsSet.Builder(claims).issuer("https://evil.example/").build()));
    tokens.put("truncated", real.substring(0, real.length() - 12));
    tokens.put("64 KiB", real + "A".repeat(64 * 1024));
    return tokens;
  }

  private static String sign(RSAKey key, JWTClaimsSet claims) throws Exception {
    SignedJWT signed =
        new SignedJWT(
            new JWSHeader.Builder(JWSAlgorithm.RS256)
                .keyID(key.getKeyID())
                .type(JOSEObjectType.JWT)
                .build(),
            claims);
    signed.sign(new RSASSASigner(key));
    return signed.serialize();
  }
}
