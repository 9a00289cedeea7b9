package ca.helu.pallas.runtime.auth;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * RFC 8693 token exchange for one downstream server (docs/runtime.md, "Downstream credentials"):
 * the caller's access token is exchanged at the issuer, by the agent as an OAuth client of its own,
 * for a token meant for that server (its audience, its RFC 8707 resource, and the scopes it needs),
 * so that the caller's own token never leaves the agent (the MCP authorization specification
 * forbids passing it on). An exchanged token is reused for the same caller's token until 30 s
 * before it expires; at most {@link #MAX_CACHED} are kept, the oldest going first.
 */
public final class TokenExchange {
  static final int MAX_CACHED = 10_000;
  private static final Duration EARLY = Duration.ofSeconds(30);
  private static final int MAX_ISSUER_TEXT = 200;
  private static final ObjectMapper JSON = new ObjectMapper();

  private record Exchanged(String token, long expiresAtNanos) {}

  private final String issuer;
  private final String client;
  private final String secret;
  private final String audience;
  private final String resource;
  private final Set<String> scopes;
  private final Duration timeout;
  private final HttpClient http;
  // by the SHA-256 of the caller's token; in insertion order, the oldest first; guarded by itself
  private final LinkedHashMap<String, Exchanged> cache = new LinkedHashMap<>();
  private volatile URI tokenEndpoint;

  /**
   * @param client the agent's client id at the issuer, {@code secret} its secret
   * @param audience the downstream server's audience (a client id, for Keycloak), or null
   * @param resource the downstream server's resource identifier (RFC 8707), or null
   * @param scopes the scopes to ask for (Keycloak grants an audience through a client scope)
   */
  public TokenExchange(
      String issuer,
      String client,
      String secret,
      String audience,
      String resource,
      Set<String> scopes,
      Duration timeout) {
    if (audience == null && resource == null) {
      throw new IllegalArgumentException("a token exchange needs an audience or a resource");
    }
    this.issuer = IssuerMetadata.normalized(issuer);
    this.client = client;
    this.secret = secret;
    this.audience = audience;
    this.resource = resource;
    this.scopes = Set.copyOf(scopes);
    this.timeout = timeout;
    this.http = HttpClient.newBuilder().connectTimeout(timeout).build();
  }

  /** Thrown when no token for the server can be had; the message names why, never a token. */
  public static final class Failure extends Exception {
    Failure(String message) {
      super(message, null, false, false);
    }
  }

  /** A token for the downstream server on behalf of the caller whose token is {@code subject}. */
  public String exchange(String subject) throws Failure {
    String key = SignedTokens.digest(subject);
    synchronized (cache) {
      Exchanged cached = cache.get(key);
      if (cached != null && System.nanoTime() - cached.expiresAtNanos < 0) {
        return cached.token;
      }
    }
    Exchanged fresh = request(subject);
    synchronized (cache) {
      cache.remove(key);
      cache.put(key, fresh);
      long now = System.nanoTime();
      Iterator<Exchanged> oldestFirst = cache.values().iterator();
      while (oldestFirst.hasNext()) {
        Exchanged e = oldestFirst.next();
        if (cache.size() > MAX_CACHED || now - e.expiresAtNanos >= 0) {
          oldestFirst.remove();
        }
      }
    }
    return fresh.token;
  }

  private Exchanged request(String subject) throws Failure {
    Map<String, String> form = new LinkedHashMap<>();
    form.put("grant_type", "urn:ietf:params:oauth:grant-type:token-exchange");
    form.put("subject_token", subject);
    form.put("subject_token_type", "urn:ietf:params:oauth:token-type:access_token");
    form.put("requested_token_type", "urn:ietf:params:oauth:token-type:access_token");
    if (audience != null) {
      form.put("audience", audience);
    }
    if (resource != null) {
      form.put("resource", resource);
    }
    if (!scopes.isEmpty()) {
      form.put("scope", String.join(" ", scopes));
    }
    String body =
        form.entrySet().stream()
            .map(e -> e.getKey() + "=" + URLEncoder.encode(e.getValue(), StandardCharsets.UTF_8))
            .collect(Collectors.joining("&"));
    String basic =
        java.util.Base64.getEncoder()
            .encodeToString(
                (URLEncoder.encode(client, StandardCharsets.UTF_8)
                        + ":"
                        + URLEncoder.encode(secret, StandardCharsets.UTF_8))
                    .getBytes(StandardCharsets.UTF_8));
    HttpResponse<String> response;
    long sent = System.nanoTime();
    try {
      response =
          http.send(
              HttpRequest.newBuilder(endpoint())
                  .timeout(timeout)
                  .header("Content-Type", "application/x-www-form-urlencoded")
                  .header("Accept", "application/json")
                  .header("Authorization", "Basic " + basic)
                  .POST(HttpRequest.BodyPublishers.ofString(body))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new Failure(
          "the issuer " + issuer + " cannot be reached to exchange the caller's token");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new Failure("interrupted while exchanging the caller's token");
    }
    JsonNode answer;
    try {
      answer = JSON.readTree(response.body());
    } catch (IOException e) {
      throw new Failure(
          "the issuer answered the token exchange with HTTP " + response.statusCode());
    }
    if (response.statusCode() != 200) {
      throw new Failure(
          "the issuer refused to exchange the caller's token for "
              + (audience != null ? audience : resource)
              + ": "
              + bounded(answer.path("error").asText("HTTP " + response.statusCode()))
              + (answer.hasNonNull("error_description")
                  ? " (" + bounded(answer.path("error_description").asText()) + ")"
                  : ""));
    }
    String token = answer.path("access_token").asText("");
    if (token.isEmpty()) {
      throw new Failure("the issuer's token exchange answer holds no access token");
    }
    long lifetime = Math.max(0, answer.path("expires_in").asLong(60) - EARLY.toSeconds());
    return new Exchanged(token, sent + Duration.ofSeconds(lifetime).toNanos());
  }

  private URI endpoint() throws IOException, InterruptedException {
    URI known = tokenEndpoint;
    if (known == null) {
      known = IssuerMetadata.read(issuer, http, timeout).tokenEndpoint();
      if (known == null) {
        throw new IOException("its discovery document names no token endpoint");
      }
      tokenEndpoint = known;
    }
    return known;
  }

  private static String bounded(String text) {
    String line = text.replaceAll("\\p{Cntrl}+", " ").strip();
    return line.length() <= MAX_ISSUER_TEXT ? line : line.substring(0, MAX_ISSUER_TEXT) + "…";
  }
}
