package ca.helu.pallas.runtime.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** Raw requests to an agent's edge with a chosen Authorization header, for inbound-auth tests. */
public final class AuthProbe {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient HTTP =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  private AuthProbe() {}

  /** A send_message call (id 7) with no session, with {@code authorization} unless null. */
  public static HttpResponse<String> sendMessage(String mcpUrl, String authorization)
      throws Exception {
    return post(
        mcpUrl,
        authorization,
        "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":"
            + "\"send_message\",\"arguments\":{\"message\":\"hello\"}}}");
  }

  public static HttpResponse<String> post(String url, String authorization, String body)
      throws Exception {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create(url))
            .timeout(Duration.ofSeconds(30))
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .POST(HttpRequest.BodyPublishers.ofString(body));
    if (authorization != null) {
      request.header("Authorization", authorization);
    }
    return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  public static HttpResponse<String> get(String url) throws Exception {
    return HTTP.send(
        HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(30)).GET().build(),
        HttpResponse.BodyHandlers.ofString());
  }

  public static JsonNode json(HttpResponse<String> response) throws Exception {
    return JSON.readTree(response.body());
  }

  /** The metadata URL a 401's WWW-Authenticate names, for {@code mcpUrl}. */
  public static String metadataUrl(String mcpUrl) {
    URI uri = URI.create(mcpUrl);
    return uri.getScheme()
        + "://"
        + uri.getRawAuthority()
        + "/.well-known/oauth-protected-resource"
        + uri.getRawPath();
  }
}
