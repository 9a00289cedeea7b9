package ca.helu.pallas.runtime.auth;

import ca.helu.pallas.api.PallasNames;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.nimbusds.jose.util.Resource;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.JWTParser;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.URL;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.text.ParseException;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The fleet's agents, and the operator, as the agent they call sees them in a cluster
 * (docs/runtime.md, "Agents calling agents"): ServiceAccount tokens the kubelet projected into the
 * caller's pod, whose audience is this agent's resource identifier. They are validated here against
 * the API server's own service-account issuer: its discovery document and key set, read from the
 * API server ({@code /.well-known/openid-configuration}, {@code /openid/v1/jwks}) with this pod's
 * token, which the default ClusterRoleBinding {@code system:service-account-issuer-discovery}
 * allows every ServiceAccount; no TokenReview, so no cluster-wide RBAC and no API request per
 * token. The subject ({@code system:serviceaccount:N:SA}) says who calls: only the ServiceAccounts
 * of the agents that list this one among their servers, and the operator's, are known.
 */
public final class ServiceAccountTokens implements AgentTokens {
  private static final Logger LOG = LoggerFactory.getLogger(ServiceAccountTokens.class);
  private static final ObjectMapper JSON = new ObjectMapper();

  /**
   * Where the API server is and how this pod talks to it.
   *
   * @param apiServer e.g. https://198.18.0.1:443 (KUBERNETES_SERVICE_HOST and _PORT in a pod)
   * @param token this pod's token for the API server (re-read at every request: the kubelet rotates
   *     it)
   * @param ca the API server's CA certificate (PEM)
   */
  public record ApiServer(URI apiServer, Path token, Path ca) {
    /** The API server of a pod whose identity volume is mounted at {@code identityDir}. */
    public static ApiServer of(String host, String port, Path identityDir) {
      String h = host.contains(":") ? "[" + host + "]" : host;
      return new ApiServer(
          URI.create("https://" + h + ":" + port),
          identityDir.resolve(PallasNames.API_TOKEN_FILE),
          identityDir.resolve(PallasNames.API_CA_FILE));
    }
  }

  private final ApiServer api;
  private final String audience;
  private final Map<String, Identity> subjects;
  private final Duration timeout;
  private volatile HttpClient http;
  private volatile String issuer;
  private volatile SignedTokens<Identity> tokens;
  private volatile String problem;

  /**
   * @param audience this agent's resource identifier
   * @param subjects who may call this agent, by their tokens' subject
   */
  public ServiceAccountTokens(
      ApiServer api, String audience, Map<String, Identity> subjects, Duration timeout) {
    this.api = api;
    this.audience = audience;
    this.subjects = Map.copyOf(subjects);
    this.timeout = timeout;
    this.problem = "the API server's service-account keys have not been read yet";
  }

  @Override
  public Optional<String> problem() {
    return Optional.ofNullable(problem);
  }

  /** Reads the API server's discovery document now, if not yet; returns whether it has been. */
  public boolean discover() {
    return tokens() != null;
  }

  @Override
  public Optional<Identity> identify(String token) throws AuthFailure {
    String iss;
    try {
      iss = JWTParser.parse(token).getJWTClaimsSet().getIssuer();
    } catch (ParseException e) {
      return Optional.empty(); // not a JWT: a static token, say
    }
    SignedTokens<Identity> signed = tokens();
    if (signed == null || iss == null || !iss.equals(issuer)) {
      // another issuer's: a caller's own token (without the API server's issuer known, none is
      // taken for an agent's, so an agent is refused as a caller would be: fail closed)
      return Optional.empty();
    }
    return Optional.of(signed.validate(token));
  }

  private Identity identity(JWTClaimsSet claims) throws AuthFailure {
    Identity known = subjects.get(claims.getSubject());
    if (known == null) {
      throw new AuthFailure(
          AuthFailure.Code.INVALID_TOKEN,
          "the token's ServiceAccount is not one of an agent that calls this agent");
    }
    return known;
  }

  private SignedTokens<Identity> tokens() {
    SignedTokens<Identity> ready = tokens;
    if (ready != null) {
      return ready;
    }
    synchronized (this) {
      if (tokens == null) {
        try {
          Resource discovery =
              retrieve(api.apiServer().resolve("/.well-known/openid-configuration"));
          String found = JSON.readTree(discovery.getContent()).path("issuer").asText("");
          if (found.isEmpty()) {
            throw new IOException("its discovery document names no issuer");
          }
          URL jwks = api.apiServer().resolve("/openid/v1/jwks").toURL();
          tokens =
              new SignedTokens<>(
                  jwks,
                  this::retrieve,
                  timeout,
                  SignedTokens.REFRESH_AT_MOST_EVERY,
                  why -> problem = why,
                  (claims, context) ->
                      SignedTokens.checkClaims(claims, found, audience, "this agent"),
                  this::identity);
          issuer = found;
          problem = null;
          LOG.info(
              "agent identities: ServiceAccount tokens of {} for audience {}", found, audience);
        } catch (IOException | GeneralSecurityException | RuntimeException e) {
          problem =
              "the API server's service-account keys cannot be read ("
                  + api.apiServer()
                  + ": "
                  + e.getMessage()
                  + ")";
          LOG.warn("agent identities: {}", problem);
        }
      }
      return tokens;
    }
  }

  /** A GET of the API server, with this pod's current token, trusting only the cluster's CA. */
  private Resource retrieve(URL url) throws IOException {
    try {
      return retrieve(url.toURI());
    } catch (java.net.URISyntaxException | GeneralSecurityException e) {
      throw new IOException(e.getMessage(), e);
    }
  }

  private Resource retrieve(URI uri) throws IOException, GeneralSecurityException {
    String token = Files.readString(api.token(), StandardCharsets.UTF_8).strip();
    HttpResponse<String> response;
    try {
      response =
          client()
              .send(
                  HttpRequest.newBuilder(uri)
                      .timeout(timeout)
                      // the key set is served only to a client that takes its own type (406
                      // otherwise)
                      .header("Accept", "application/json, application/jwk-set+json")
                      .header("Authorization", "Bearer " + token)
                      .build(),
                  HttpResponse.BodyHandlers.ofString());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted");
    }
    if (response.statusCode() != 200) {
      throw new IOException(uri.getPath() + " answered HTTP " + response.statusCode());
    }
    return new Resource(
        response.body(), response.headers().firstValue("Content-Type").orElse(null));
  }

  private HttpClient client() throws IOException, GeneralSecurityException {
    HttpClient ready = http;
    if (ready == null) {
      synchronized (this) {
        if (http == null) {
          http =
              HttpClient.newBuilder()
                  .connectTimeout(timeout)
                  .sslContext(trusting(api.ca()))
                  .build();
        }
        ready = http;
      }
    }
    return ready;
  }

  /** A TLS context that trusts exactly the certificates of a PEM file. */
  private static SSLContext trusting(Path pem) throws IOException, GeneralSecurityException {
    KeyStore trusted = KeyStore.getInstance(KeyStore.getDefaultType());
    trusted.load(null, null);
    try (InputStream in = Files.newInputStream(pem)) {
      int i = 0;
      for (Certificate c : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
        trusted.setCertificateEntry("ca-" + i++, c);
      }
    }
    TrustManagerFactory trust =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    trust.init(trusted);
    SSLContext tls = SSLContext.getInstance("TLS");
    tls.init(null, trust.getTrustManagers(), null);
    return tls;
  }
}
