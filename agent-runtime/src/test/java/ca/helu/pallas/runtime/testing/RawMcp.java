package ca.helu.pallas.runtime.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * Streamable HTTP by hand over one shared HttpClient: cheap enough to hold hundreds of concurrent
 * sessions with distinct bearers (an SDK client costs a selector thread each).
 */
public final class RawMcp {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient HTTP =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  private final String url;
  private final String bearer;
  private final String session;
  private final Map<String, String> headers;

  private RawMcp(String url, String bearer, String session) {
    this(url, bearer, session, Map.of());
  }

  private RawMcp(String url, String bearer, String session, Map<String, String> headers) {
    this.url = url;
    this.bearer = bearer;
    this.session = session;
    this.headers = Map.copyOf(headers);
  }

  /**
   * The name prefix of the shared client's threads ({@code HttpClient-<id>-}), for a benchmark to
   * tell them from a server's own JDK HTTP clients (the JDK's client names its threads by its id,
   * which its {@code toString()} ends with).
   */
  public static String clientThreads() {
    String client = HTTP.toString();
    return "HttpClient-"
        + client.substring(client.lastIndexOf('(') + 1, client.lastIndexOf(')'))
        + "-";
  }

  /** This session, its requests sent with these headers too. */
  public RawMcp withHeaders(Map<String, String> extra) {
    return new RawMcp(url, bearer, session, extra);
  }

  public static RawMcp open(String url, String bearer) throws Exception {
    return open(url, bearer, "2025-06-18");
  }

  /** A session initialized with this protocol version. */
  public static RawMcp open(String url, String bearer, String protocolVersion) throws Exception {
    RawMcp unopened = new RawMcp(url, bearer, null);
    HttpResponse<String> init =
        unopened.post(
            "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"
                + "\"protocolVersion\":\""
                + protocolVersion
                + "\",\"capabilities\":{},"
                + "\"clientInfo\":{\"name\":\"raw\",\"version\":\"1\"}}}");
    String session = init.headers().firstValue("mcp-session-id").orElseThrow();
    RawMcp open = new RawMcp(url, bearer, session);
    open.post("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
    return open;
  }

  /** tools/call; returns the JSON-RPC result (from a JSON or an SSE response). */
  public JsonNode callTool(String tool, Map<String, Object> arguments) throws Exception {
    return request("tools/call", Map.of("name", tool, "arguments", arguments));
  }

  /** A JSON-RPC request with id 1; returns its result (from a JSON or an SSE response). */
  public JsonNode request(String method, Map<String, Object> params) throws Exception {
    String body =
        JSON.writeValueAsString(
            Map.of("jsonrpc", "2.0", "id", 1, "method", method, "params", params));
    return result(post(body).body());
  }

  /** The JSON-RPC answer to request {@code id} in a response body (JSON or SSE), or null. */
  public static JsonNode answer(String responseBody, Object id) throws IOException {
    for (String line : responseBody.split("\n")) {
      String data = line.startsWith("data:") ? line.substring(5).strip() : line.strip();
      if (data.startsWith("{")) {
        JsonNode node = JSON.readTree(data);
        if (node.has("id") && node.get("id").equals(JSON.valueToTree(id))) {
          return node;
        }
      }
    }
    return null;
  }

  /** A tools/call request with this id, as sent on the wire. */
  public static String toolCall(Object id, String tool, Map<String, Object> arguments)
      throws IOException {
    return toolCall(id, tool, arguments, null);
  }

  /**
   * The same, asking for progress under {@code progressToken} ({@code params._meta}) unless null.
   */
  public static String toolCall(
      Object id, String tool, Map<String, Object> arguments, Object progressToken)
      throws IOException {
    Map<String, Object> params = new LinkedHashMap<>();
    params.put("name", tool);
    params.put("arguments", arguments);
    if (progressToken != null) {
      params.put("_meta", Map.of("progressToken", progressToken));
    }
    return JSON.writeValueAsString(
        Map.of("jsonrpc", "2.0", "id", id, "method", "tools/call", "params", params));
  }

  /** POSTs a raw JSON-RPC message on this session without waiting for the answer. */
  public CompletableFuture<HttpResponse<String>> postAsync(String body) {
    return HTTP.sendAsync(request(body), HttpResponse.BodyHandlers.ofString());
  }

  private static JsonNode result(String responseBody) throws IOException {
    for (String line : responseBody.split("\n")) {
      String data = line.startsWith("data:") ? line.substring(5).strip() : line.strip();
      if (data.startsWith("{") && data.contains("\"id\"")) {
        JsonNode node = JSON.readTree(data);
        if (node.has("result")) {
          return node.get("result");
        }
        if (node.has("error")) {
          throw new IllegalStateException(node.get("error").toString());
        }
      }
    }
    throw new IllegalStateException("no result in: " + responseBody);
  }

  /**
   * The head of a raw MCP POST on /mcp, with {@code framing} (e.g. {@code "Content-Length: 10"},
   * {@code "Transfer-Encoding: chunked"}) as its last header lines.
   */
  public static String postHead(String framing) {
    return "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        + "Accept: application/json, text/event-stream\r\n"
        + framing
        + "\r\n\r\n";
  }

  /**
   * What the agent on this port answers a chunked POST of {@code mib} MiB of spaces with, as raw
   * HTTP (bytes on a socket: the body is never complete JSON).
   */
  public static String chunkedPost(int port, int mib) throws IOException {
    try (Socket socket = new Socket("127.0.0.1", port)) {
      OutputStream out = socket.getOutputStream();
      out.write(postHead("Transfer-Encoding: chunked").getBytes(StandardCharsets.US_ASCII));
      byte[] chunk = new byte[1 << 20];
      Arrays.fill(chunk, (byte) ' ');
      byte[] size =
          (Integer.toHexString(chunk.length) + "\r\n").getBytes(StandardCharsets.US_ASCII);
      try {
        for (int i = 0; i < mib; i++) {
          out.write(size);
          out.write(chunk);
          out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
        }
        out.write("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
      } catch (IOException refused) {
        // the server stops reading once it refuses
      }
      return new String(socket.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
    }
  }

  public static String text(JsonNode result) {
    return result.get("content").get(0).get("text").asText();
  }

  /** This session, its requests sent to another URL (another replica of the agent). */
  public RawMcp at(String otherUrl) {
    return new RawMcp(otherUrl, bearer, session, headers);
  }

  /** This session, its requests sent with another bearer (null: none). */
  public RawMcp as(String otherBearer) {
    return new RawMcp(url, otherBearer, session, headers);
  }

  /** The session's Mcp-Session-Id. */
  public String session() {
    return session;
  }

  /** DELETE of the session, as a client ending it; the HTTP status. */
  public int delete() throws Exception {
    return HTTP.send(
            HttpRequest.newBuilder(URI.create(url))
                .header("Mcp-Session-Id", session)
                .DELETE()
                .build(),
            HttpResponse.BodyHandlers.discarding())
        .statusCode();
  }

  /** POSTs a raw JSON-RPC message on this session. */
  public HttpResponse<String> post(String body) throws Exception {
    return HTTP.send(request(body), HttpResponse.BodyHandlers.ofString());
  }

  private HttpRequest request(String body) {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create(url))
            .timeout(Duration.ofSeconds(120))
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .POST(HttpRequest.BodyPublishers.ofString(body));
    if (bearer != null) {
      b.header("Authorization", "Bearer " + bearer);
    }
    if (session != null) {
      b.header("Mcp-Session-Id", session);
    }
    headers.forEach(b::header);
    return b.build();
  }
}
