package ca.helu.pallas.runtime.auth;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * What an issuer's OpenID discovery document says (docs/runtime.md, "Inbound authentication"): the
 * document must name the issuer it was read from, or nothing of it is believed.
 *
 * @param issuer the issuer identifier, without a trailing slash
 * @param jwksUri where its signing keys are
 * @param tokenEndpoint where tokens are issued and exchanged, or null when the document names none
 */
record IssuerMetadata(String issuer, URI jwksUri, URI tokenEndpoint) {
  private static final ObjectMapper JSON = new ObjectMapper();

  static String normalized(String issuer) {
    return issuer.endsWith("/") ? issuer.substring(0, issuer.length() - 1) : issuer;
  }

  /** Reads {@code {issuer}/.well-known/openid-configuration}. */
  static IssuerMetadata read(String issuer, HttpClient http, Duration timeout)
      throws IOException, InterruptedException {
    String id = normalized(issuer);
    HttpResponse<String> response =
        http.send(
            HttpRequest.newBuilder(URI.create(id + "/.well-known/openid-configuration"))
                .timeout(timeout)
                .header("Accept", "application/json")
                .build(),
            HttpResponse.BodyHandlers.ofString());
    if (response.statusCode() != 200) {
      throw new IOException("its discovery document answered HTTP " + response.statusCode());
    }
    JsonNode document = JSON.readTree(response.body());
    if (!normalized(document.path("issuer").asText("")).equals(id)) {
      throw new IOException("its discovery document names another issuer");
    }
    return new IssuerMetadata(
        id,
        uri(document, "jwks_uri"),
        document.hasNonNull("token_endpoint") ? uri(document, "token_endpoint") : null);
  }

  private static URI uri(JsonNode document, String field) throws IOException {
    String value = document.path(field).asText("");
    if (value.isEmpty()) {
      throw new IOException("its discovery document has no " + field);
    }
    try {
      return URI.create(value);
    } catch (IllegalArgumentException e) {
      throw new IOException("its discovery document's " + field + " is not a URI");
    }
  }
}
