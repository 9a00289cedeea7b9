package ca.helu.pallas.runtime.registry;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.undertow.server.HttpHandler;
import io.undertow.server.HttpServerExchange;
import io.undertow.util.Headers;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The fleet through the MCP Registry API (docs/contract.md, "Registry API"), read-only, from the
 * same entries as server.json: {@code GET /v0.1/servers} (cursor, limit, search, version), {@code
 * GET /v0.1/servers/{name}/versions} and {@code GET /v0.1/servers/{name}/versions/{version}}
 * ({@code latest} too), names and versions URL-encoded. A fleet holds one version of each agent,
 * which is its latest. Mistakes are answered as the official registry answers them: problem JSON
 * (RFC 9457) with a status and a detail.
 */
final class RegistryApi implements HttpHandler {
  static final String PREFIX = "/v0.1/servers";
  static final int DEFAULT_LIMIT = 30;
  static final int MAX_LIMIT = 100;
  private static final ObjectMapper JSON = new ObjectMapper();

  private volatile List<JsonNode> entries;

  RegistryApi(ArrayNode entries) {
    update(entries);
  }

  /** The fleet's entries now, ordered by name (the cursor's order). */
  void update(ArrayNode entries) {
    List<JsonNode> sorted = new ArrayList<>();
    entries.forEach(sorted::add);
    sorted.sort(Comparator.comparing(RegistryApi::name));
    this.entries = List.copyOf(sorted);
  }

  private static String name(JsonNode entry) {
    return entry.path("server").path("name").asText();
  }

  @Override
  public void handleRequest(HttpServerExchange exchange) {
    if (!exchange.getRequestMethod().toString().equals("GET")) {
      exchange.getResponseHeaders().put(Headers.ALLOW, "GET");
      problem(exchange, 405, "only GET is served: this registry is read-only");
      return;
    }
    // the raw path: a name's "/" arrives as %2F, which must not split it
    String rest = exchange.getRequestURI();
    int query = rest.indexOf('?');
    rest = (query < 0 ? rest : rest.substring(0, query)).substring(PREFIX.length());
    if (rest.isEmpty() || rest.equals("/")) {
      list(exchange);
      return;
    }
    String[] parts = rest.substring(1).split("/", -1);
    if (parts.length < 2 || parts.length > 3 || !parts[1].equals("versions")) {
      problem(exchange, 404, "no such resource: see GET /v0.1/servers");
      return;
    }
    JsonNode entry = find(decode(parts[0]));
    if (entry == null) {
      problem(exchange, 404, "Server not found");
      return;
    }
    if (parts.length == 2) {
      send(exchange, 200, page(List.of(entry), null));
      return;
    }
    String version = decode(parts[2]);
    if (!version.equals("latest")
        && !version.equals(entry.path("server").path("version").asText())) {
      problem(exchange, 404, "Server version not found");
      return;
    }
    send(exchange, 200, entry);
  }

  private void list(HttpServerExchange exchange) {
    Map<String, Deque<String>> params = exchange.getQueryParameters();
    int limit = DEFAULT_LIMIT;
    String given = param(params, "limit");
    if (given != null) {
      try {
        limit = Integer.parseInt(given);
      } catch (NumberFormatException e) {
        limit = -1;
      }
      if (limit < 1 || limit > MAX_LIMIT) {
        problem(exchange, 422, "limit must be a number from 1 to " + MAX_LIMIT);
        return;
      }
    }
    String cursor = param(params, "cursor");
    String search = param(params, "search");
    String version = param(params, "version");
    List<JsonNode> found = new ArrayList<>();
    for (JsonNode entry : entries) {
      String name = name(entry);
      if ((cursor == null || name.compareTo(cursor) > 0)
          && (search == null
              || name.toLowerCase(Locale.ROOT).contains(search.toLowerCase(Locale.ROOT)))
          && (version == null
              || version.equals("latest")
              || version.equals(entry.path("server").path("version").asText()))) {
        found.add(entry);
      }
    }
    List<JsonNode> page = found.subList(0, Math.min(limit, found.size()));
    String next = found.size() > limit ? name(page.getLast()) : null;
    send(exchange, 200, page(page, next));
  }

  private static ObjectNode page(List<JsonNode> servers, String nextCursor) {
    ObjectNode body = JSON.createObjectNode();
    body.putArray("servers").addAll(servers);
    ObjectNode metadata = body.putObject("metadata");
    metadata.put("count", servers.size());
    if (nextCursor != null) {
      metadata.put("nextCursor", nextCursor);
    }
    return body;
  }

  private JsonNode find(String name) {
    return entries.stream().filter(e -> name(e).equals(name)).findFirst().orElse(null);
  }

  private static String param(Map<String, Deque<String>> params, String name) {
    Deque<String> values = params.get(name);
    return values == null || values.isEmpty() || values.getFirst().isEmpty()
        ? null
        : values.getFirst();
  }

  private static String decode(String segment) {
    return URLDecoder.decode(segment.replace("+", "%2B"), StandardCharsets.UTF_8);
  }

  private static void problem(HttpServerExchange exchange, int status, String detail) {
    ObjectNode problem = JSON.createObjectNode();
    problem.put(
        "title",
        status == 404
            ? "Not Found"
            : status == 405 ? "Method Not Allowed" : "Unprocessable Entity");
    problem.put("status", status);
    problem.put("detail", detail);
    exchange.getResponseHeaders().put(Headers.CONTENT_TYPE, "application/problem+json");
    write(exchange, status, problem);
  }

  private static void send(HttpServerExchange exchange, int status, JsonNode body) {
    exchange.getResponseHeaders().put(Headers.CONTENT_TYPE, "application/json");
    exchange.getResponseHeaders().put(Headers.CACHE_CONTROL, "no-cache");
    write(exchange, status, body);
  }

  private static void write(HttpServerExchange exchange, int status, JsonNode body) {
    exchange.setStatusCode(status);
    try {
      exchange.getResponseSender().send(JSON.writeValueAsString(body));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }
}
