package ca.helu.pallas.runtime.http;

import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.NullNode;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.IOException;
import java.util.Arrays;
import java.util.Collection;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * What a POST body to /mcp holds, read once at the edge (docs/runtime.md, "Errors callers see"):
 * its JSON-RPC id, method and kind, or the reason it is refused before the MCP SDK sees it. A body
 * is refused here when the SDK would fail on it without answering, or answer with words of its own:
 * not a single JSON-RPC 2.0 object, and params that do not have the form the SDK reads for their
 * method (each checked by converting them to the SDK's own request type, the way the SDK does, so a
 * field of the wrong type anywhere is an error answer, not an empty response). The parsed tree is
 * not kept: only the few fields the edge needs are.
 *
 * @param id the request's id, or null (JSON null) for a notification or an unreadable body
 * @param method the JSON-RPC method, or "" for a response
 * @param problem why the body is refused, or null
 * @param code the JSON-RPC error code for {@code problem}
 * @param tool the tool a tools/call request names, or null
 * @param uri the resource a resources/read, subscribe or unsubscribe request names, or null
 * @param cancelled the request id a notifications/cancelled names, or null
 */
record McpEnvelope(
    JsonNode id,
    String method,
    boolean hasId,
    String problem,
    int code,
    String tool,
    String uri,
    JsonNode cancelled) {
  static final int PARSE_ERROR = -32700;
  static final int INVALID_REQUEST = -32600;
  static final int INVALID_PARAMS = -32602;

  private static final Set<String> LOG_LEVELS =
      Set.of("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency");

  /** The SDK's type for each method's params (McpAsyncServer converts them to these). */
  private static final Map<String, Class<?>> PARAMS =
      Map.ofEntries(
          Map.entry("initialize", McpSchema.InitializeRequest.class),
          Map.entry("tools/call", McpSchema.CallToolRequest.class),
          Map.entry("tools/list", McpSchema.PaginatedRequest.class),
          Map.entry("prompts/list", McpSchema.PaginatedRequest.class),
          Map.entry("prompts/get", McpSchema.GetPromptRequest.class),
          Map.entry("resources/list", McpSchema.PaginatedRequest.class),
          Map.entry("resources/templates/list", McpSchema.PaginatedRequest.class),
          Map.entry("resources/read", McpSchema.ReadResourceRequest.class),
          Map.entry("resources/subscribe", McpSchema.SubscribeRequest.class),
          Map.entry("resources/unsubscribe", McpSchema.UnsubscribeRequest.class),
          Map.entry("logging/setLevel", McpSchema.SetLevelRequest.class),
          Map.entry("completion/complete", McpSchema.CompleteRequest.class));

  private static final Set<String> RESOURCE_METHODS =
      Set.of("resources/read", "resources/subscribe", "resources/unsubscribe");

  /** What an agent offers without a token with openHealth: pallas://agents/{agent}/{this}. */
  private static final Set<String> OPEN_RESOURCES = Set.of("health", "tools", "servers");

  /**
   * A read of, or a subscription to, an agent's health resource, or the tools and servers resources
   * the registry indexes (docs/contract.md, "Resources"): get_health's answer in another form, and
   * what tools/list and get_health tell of the agent's servers.
   */
  boolean isOpenResource() {
    String prefix = "pallas://agents/";
    if (uri == null || !uri.startsWith(prefix)) {
      return false;
    }
    int slash = uri.indexOf('/', prefix.length());
    return slash > prefix.length()
        && uri.indexOf('/', slash + 1) < 0
        && OPEN_RESOURCES.contains(uri.substring(slash + 1));
  }

  /** A JSON-RPC notification (a method, no id). */
  boolean isNotification() {
    return problem == null && !method.isEmpty() && !hasId;
  }

  /** A JSON-RPC response (a result or an error, no method). */
  boolean isResponse() {
    return problem == null && method.isEmpty();
  }

  /** Reads {@code body} with {@code json}; the tree it builds is gone when this returns. */
  static McpEnvelope read(ObjectMapper json, byte[] body, int length) {
    JsonNode message;
    try {
      message = json.readTree(body, 0, length);
    } catch (IOException e) {
      return refused(NullNode.instance, PARSE_ERROR, "Parse error: the body is not valid JSON");
    }
    if (message == null || message.isMissingNode()) {
      return refused(NullNode.instance, PARSE_ERROR, "Parse error: the body is empty");
    }
    JsonNode id = message.isObject() && message.has("id") ? message.get("id") : NullNode.instance;
    String problem = envelopeProblem(message);
    if (problem == null) {
      problem = paramsProblem(json, message);
    }
    if (problem != null) {
      return refused(
          id, problem.startsWith("Invalid params") ? INVALID_PARAMS : INVALID_REQUEST, problem);
    }
    String method = message.path("method").asText("");
    String tool =
        method.equals("tools/call") ? message.path("params").path("name").asText(null) : null;
    String uri =
        RESOURCE_METHODS.contains(method) ? message.path("params").path("uri").asText(null) : null;
    JsonNode cancelled =
        method.equals("notifications/cancelled") ? message.path("params").get("requestId") : null;
    return new McpEnvelope(id, method, message.has("id"), null, 0, tool, uri, cancelled);
  }

  private static McpEnvelope refused(JsonNode id, int code, String problem) {
    return new McpEnvelope(id, "", !id.isNull(), problem, code, null, null, null);
  }

  /** What makes this message one the transport cannot answer properly, or null. */
  static String envelopeProblem(JsonNode message) {
    if (message.isArray()) {
      return "Invalid Request: JSON-RPC batches are not supported; send one message per request";
    }
    if (!message.isObject()) {
      return "Invalid Request: the body must be a JSON-RPC request, notification or response object";
    }
    if (!"2.0".equals(message.path("jsonrpc").asText(null))
        || !message.get("jsonrpc").isTextual()) {
      return "Invalid Request: \"jsonrpc\" must be \"2.0\"";
    }
    JsonNode id = message.get("id");
    if (id != null && !(id.isTextual() || id.isIntegralNumber())) {
      return "Invalid Request: \"id\" must be a string or an integer";
    }
    JsonNode method = message.get("method");
    if (method == null) {
      return message.has("result") || message.has("error")
          ? null
          : "Invalid Request: a message needs \"method\" (or \"result\" or \"error\")";
    }
    if (!method.isTextual()) {
      return "Invalid Request: \"method\" must be a string";
    }
    JsonNode params = message.get("params");
    if (params != null && !params.isObject()) {
      return "Invalid params: \"params\" must be an object";
    }
    switch (method.asText()) {
      case "initialize" -> {
        if (params == null || !params.path("protocolVersion").isTextual()) {
          return "Invalid params: initialize needs params with \"protocolVersion\"";
        }
      }
      case "tools/call" -> {
        if (params == null || !params.path("name").isTextual()) {
          return "Invalid params: tools/call needs params with the tool's \"name\"";
        }
        JsonNode arguments = params.get("arguments");
        if (arguments != null && !arguments.isObject()) {
          return "Invalid params: tools/call \"arguments\" must be an object";
        }
      }
      case "logging/setLevel" -> {
        if (params == null || !LOG_LEVELS.contains(params.path("level").asText(""))) {
          return "Invalid params: logging/setLevel needs \"level\", one of debug, info, notice,"
              + " warning, error, critical, alert, emergency";
        }
      }
      case "prompts/get" -> {
        if (params == null || !params.path("name").isTextual()) {
          return "Invalid params: prompts/get needs params with the prompt's \"name\"";
        }
      }
      default -> {}
    }
    return null;
  }

  /**
   * Why a request's params cannot become the SDK's type for its method, or null. The SDK converts
   * them inside its handler, where a failure escapes its error answer: the client would get an
   * empty response and no JSON-RPC answer at all.
   */
  static String paramsProblem(ObjectMapper json, JsonNode message) {
    Class<?> type = PARAMS.get(message.path("method").asText(""));
    if (type == null || !message.has("id")) {
      return null;
    }
    JsonNode params = message.get("params");
    try {
      json.treeToValue(params == null ? JsonNodeFactory.instance.objectNode() : params, type);
      return null;
    } catch (IOException | IllegalArgumentException e) {
      String method = message.get("method").asText();
      return e instanceof MismatchedInputException m
          ? "Invalid params: " + method + " " + where(m) + " must be " + expected(m.getTargetType())
          : "Invalid params: " + method + " params do not have the form the MCP schema gives them";
    }
  }

  /** The kind of JSON value a Java type is read from. */
  private static String expected(Class<?> type) {
    if (type == null) {
      return "of another type";
    }
    if (Map.class.isAssignableFrom(type) || type.isRecord()) {
      return "an object";
    }
    if (Collection.class.isAssignableFrom(type) || type.isArray()) {
      return "an array";
    }
    if (type == String.class) {
      return "a string";
    }
    if (type == Boolean.class || type == boolean.class) {
      return "a boolean";
    }
    if (Number.class.isAssignableFrom(type) || type.isPrimitive()) {
      return "a number";
    }
    if (type.isEnum()) {
      return "one of "
          + Arrays.stream(type.getEnumConstants())
              .map(c -> c.toString().toLowerCase(Locale.ROOT))
              .collect(Collectors.joining(", "));
    }
    return "of another type";
  }

  /** The field at fault, as a JSON path inside params, without any of its value. */
  private static String where(JsonMappingException e) {
    String path =
        e.getPath().stream()
            .map(r -> r.getFieldName() != null ? r.getFieldName() : "[" + r.getIndex() + "]")
            .map(McpEnvelope::shortName)
            .collect(Collectors.joining("."))
            .replace(".[", "[");
    return path.isEmpty() ? "params" : "params." + path;
  }

  /** A client's field name in an error message: bounded and printable. */
  private static String shortName(String name) {
    String printable = name.codePoints().allMatch(c -> c >= 0x20 && c < 0x7f) ? name : "(unusual)";
    return printable.length() > 64 ? printable.substring(0, 64) + "..." : printable;
  }
}
