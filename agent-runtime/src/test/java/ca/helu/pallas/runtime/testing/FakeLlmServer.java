package ca.helu.pallas.runtime.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.function.Supplier;

/**
 * A fake LLM endpoint speaking the real wire format of OpenAI chat completions ({@code POST
 * /v1/chat/completions}, {@code GET /v1/models}) or Anthropic Messages ({@code POST /v1/messages},
 * {@code GET /v1/models/{id}}), on 127.0.0.1 unless told another local address. Replies are
 * scripted per request; every request is recorded with its headers and JSON body.
 */
public final class FakeLlmServer implements AutoCloseable {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** The wire format spoken. */
  public enum Flavor {
    OPENAI,
    ANTHROPIC
  }

  /** One recorded request. */
  public record Request(
      String method, String path, Map<String, List<String>> headers, JsonNode body) {
    public String header(String name) {
      for (var e : headers.entrySet()) {
        if (e.getKey().equalsIgnoreCase(name)) {
          return e.getValue().get(0);
        }
      }
      return null;
    }
  }

  /** One scripted answer. */
  public record Reply(int status, String body, long delayMillis) {}

  private final Flavor flavor;
  private final HttpServer server;
  private final List<String> models;
  private final ConcurrentLinkedQueue<Reply> script = new ConcurrentLinkedQueue<>();
  private final List<Request> requests = new CopyOnWriteArrayList<>();
  private volatile Supplier<Reply> fallback;

  private FakeLlmServer(Flavor flavor, String host, List<String> models) throws IOException {
    this.flavor = flavor;
    this.models = List.copyOf(models);
    this.fallback = () -> text("default answer", 1, 1);
    server = HttpServer.create(new InetSocketAddress(host, 0), 0);
    server.setExecutor(Executors.newVirtualThreadPerTaskExecutor());
    server.createContext("/", this::handle);
    server.start();
  }

  public static FakeLlmServer openAi(String... models) throws IOException {
    return new FakeLlmServer(Flavor.OPENAI, "127.0.0.1", List.of(models));
  }

  /**
   * An OpenAI-compatible server on another local address, e.g. a cluster bridge's, where pods reach
   * the host.
   */
  public static FakeLlmServer openAiOn(String host, String... models) throws IOException {
    return new FakeLlmServer(Flavor.OPENAI, host, List.of(models));
  }

  public static FakeLlmServer anthropic(String... models) throws IOException {
    return new FakeLlmServer(Flavor.ANTHROPIC, "127.0.0.1", List.of(models));
  }

  /** e.g. http://127.0.0.1:PORT/v1 */
  public String baseUrl() {
    return "http://"
        + server.getAddress().getAddress().getHostAddress()
        + ":"
        + server.getAddress().getPort()
        + "/v1";
  }

  public FakeLlmServer then(Reply... replies) {
    script.addAll(List.of(replies));
    return this;
  }

  /** The answer when the script is empty. */
  public FakeLlmServer otherwise(Supplier<Reply> reply) {
    this.fallback = reply;
    return this;
  }

  /** Chat requests received (not model listings). */
  public List<Request> chatRequests() {
    return requests.stream().filter(r -> r.method().equals("POST")).toList();
  }

  public List<Request> requests() {
    return requests;
  }

  public void reset() {
    script.clear();
    requests.clear();
  }

  // ---- replies in this server's wire format

  /** A final text answer with usage (cache and reasoning counts included). */
  public Reply text(String text, int input, int output) {
    ObjectNode body = JSON.createObjectNode();
    if (flavor == Flavor.OPENAI) {
      ObjectNode message = choice(body, "stop");
      message.put("content", text);
      usage(body, input, output);
    } else {
      anthropicEnvelope(body, "end_turn", input, output);
      ObjectNode block = ((ArrayNode) body.get("content")).addObject();
      block.put("type", "text");
      block.put("text", text);
    }
    return new Reply(200, body.toString(), 0);
  }

  /** An answer asking for one tool call. */
  public Reply toolCall(String id, String tool, String argumentsJson) {
    ObjectNode body = JSON.createObjectNode();
    try {
      if (flavor == Flavor.OPENAI) {
        ObjectNode message = choice(body, "tool_calls");
        message.putNull("content");
        ObjectNode call = message.putArray("tool_calls").addObject();
        call.put("id", id);
        call.put("type", "function");
        call.putObject("function").put("name", tool).put("arguments", argumentsJson);
        usage(body, 10, 5);
      } else {
        anthropicEnvelope(body, "tool_use", 10, 5);
        ObjectNode block = ((ArrayNode) body.get("content")).addObject();
        block.put("type", "tool_use");
        block.put("id", id);
        block.put("name", tool);
        block.set("input", JSON.readTree(argumentsJson));
      }
    } catch (IOException e) {
      throw new IllegalArgumentException(e);
    }
    return new Reply(200, body.toString(), 0);
  }

  /** An OpenAI answer asking for several tool calls at once: {id, tool, argumentsJson} each. */
  public Reply toolCalls(List<String[]> calls) {
    ObjectNode body = JSON.createObjectNode();
    ObjectNode message = choice(body, "tool_calls");
    message.putNull("content");
    ArrayNode array = message.putArray("tool_calls");
    for (String[] c : calls) {
      ObjectNode call = array.addObject();
      call.put("id", c[0]);
      call.put("type", "function");
      call.putObject("function").put("name", c[1]).put("arguments", c[2]);
    }
    usage(body, 10, 5);
    return new Reply(200, body.toString(), 0);
  }

  public static Reply status(int status) {
    return new Reply(
        status,
        "{\"error\":{\"message\":\"scripted " + status + "\",\"type\":\"server_error\"}}",
        0);
  }

  public static Reply garbage() {
    return new Reply(200, "<html>this is not JSON</html>", 0);
  }

  public static Reply delayed(long millis, Reply reply) {
    return new Reply(reply.status(), reply.body(), millis);
  }

  private ObjectNode choice(ObjectNode body, String finish) {
    body.put("id", "chatcmpl-test");
    body.put("object", "chat.completion");
    body.put("created", 1_700_000_000);
    body.put("model", models.isEmpty() ? "test" : models.get(0));
    ObjectNode choice = body.putArray("choices").addObject();
    choice.put("index", 0);
    choice.put("finish_reason", finish);
    ObjectNode message = choice.putObject("message");
    message.put("role", "assistant");
    return message;
  }

  private static void usage(ObjectNode body, int input, int output) {
    ObjectNode usage = body.putObject("usage");
    usage.put("prompt_tokens", input);
    usage.put("completion_tokens", output);
    usage.put("total_tokens", input + output);
    usage.putObject("prompt_tokens_details").put("cached_tokens", 3);
    usage.putObject("completion_tokens_details").put("reasoning_tokens", 2);
  }

  private void anthropicEnvelope(ObjectNode body, String stop, int input, int output) {
    body.put("id", "msg_test");
    body.put("type", "message");
    body.put("role", "assistant");
    body.put("model", models.isEmpty() ? "test" : models.get(0));
    body.putArray("content");
    body.put("stop_reason", stop);
    ObjectNode usage = body.putObject("usage");
    usage.put("input_tokens", input);
    usage.put("output_tokens", output);
    usage.put("cache_creation_input_tokens", 4);
    usage.put("cache_read_input_tokens", 6);
  }

  // ---- HTTP

  private void handle(HttpExchange exchange) throws IOException {
    String path = exchange.getRequestURI().getPath();
    String method = exchange.getRequestMethod();
    byte[] raw = exchange.getRequestBody().readAllBytes();
    JsonNode body = raw.length == 0 ? null : JSON.readTree(raw);
    requests.add(new Request(method, path, Map.copyOf(exchange.getRequestHeaders()), body));
    try {
      if (method.equals("GET") && path.equals("/v1/models")) {
        ObjectNode list = JSON.createObjectNode();
        list.put("object", "list");
        ArrayNode data = list.putArray("data");
        models.forEach(m -> data.addObject().put("id", m).put("object", "model"));
        respond(exchange, new Reply(200, list.toString(), 0));
      } else if (method.equals("GET") && path.startsWith("/v1/models/")) {
        String id = path.substring("/v1/models/".length());
        respond(
            exchange,
            models.contains(id)
                ? new Reply(200, "{\"id\":\"" + id + "\",\"type\":\"model\"}", 0)
                : new Reply(
                    404, "{\"type\":\"error\",\"error\":{\"type\":\"not_found_error\"}}", 0));
      } else if (method.equals("POST")
          && (path.equals("/v1/chat/completions") || path.equals("/v1/messages"))) {
        Reply next = script.poll();
        respond(exchange, next != null ? next : fallback.get());
      } else {
        respond(exchange, new Reply(404, "{}", 0));
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static void respond(HttpExchange exchange, Reply reply)
      throws IOException, InterruptedException {
    if (reply.delayMillis() > 0) {
      Thread.sleep(reply.delayMillis());
    }
    byte[] bytes = reply.body().getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().add("Content-Type", "application/json");
    try {
      exchange.sendResponseHeaders(reply.status(), bytes.length);
      exchange.getResponseBody().write(bytes);
    } catch (IOException e) {
      // the client gave up (timeout test)
    } finally {
      exchange.close();
    }
  }

  /** Texts of the messages array of a recorded chat request, by role. */
  public static List<String> roles(Request request) {
    List<String> roles = new ArrayList<>();
    request.body().get("messages").forEach(m -> roles.add(m.get("role").asText()));
    return roles;
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
