package ca.helu.pallas.runtime.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * A fake LLM endpoint speaking the real wire format of OpenAI chat completions ({@code POST
 * /v1/chat/completions}, {@code GET /v1/models}) or Anthropic Messages ({@code POST /v1/messages},
 * {@code GET /v1/models/{id}}), on 127.0.0.1 unless told another local address. Replies are
 * scripted per request; every request is recorded with its headers and JSON body.
 *
 * <p>A request with {@code "stream": true} gets its scripted answer as the provider's server-sent
 * events: OpenAI's {@code chat.completion.chunk}s (text and tool-call deltas, the finish reason,
 * then a usage chunk when {@code stream_options.include_usage}, then {@code [DONE]}); Anthropic's
 * {@code message_start}, {@code content_block_start/delta/stop}, {@code message_delta} and {@code
 * message_stop}. The text goes in {@link #streaming pieces}, a gap apart; an error status or a body
 * that is not an answer is sent as it is, as the providers do.
 */
public final class FakeLlmServer implements AutoCloseable {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** The wire format spoken. */
  public enum Flavor {
    OPENAI,
    ANTHROPIC
  }

  /**
   * One recorded request: when it arrived ({@link System#nanoTime()}), and whether its client left
   * before the answer was complete ({@code abandoned} completes when a write to it failed).
   */
  public record Request(
      String method,
      String path,
      Map<String, List<String>> headers,
      JsonNode body,
      long receivedNanos,
      CompletableFuture<Void> abandoned) {
    public String header(String name) {
      for (var e : headers.entrySet()) {
        if (e.getKey().equalsIgnoreCase(name)) {
          return e.getValue().get(0);
        }
      }
      return null;
    }
  }

  /**
   * One scripted answer: after {@code delayMillis}, its status and headers, then its body at once,
   * or one byte every {@code trickleMillis}; or, when {@code stall}, 200 and its headers, then no
   * content ever: only a JSON space every 100 ms (whitespace a parser skips, and the writes by
   * which this server notices the client leaving), for at most ten minutes.
   */
  public record Reply(
      int status,
      String body,
      long delayMillis,
      Map<String, String> headers,
      long trickleMillis,
      boolean stall,
      int breakAfter) {
    public Reply(int status, String body, long delayMillis) {
      this(status, body, delayMillis, Map.of(), 0, false, -1);
    }

    /** This reply with one more response header. */
    public Reply withHeader(String name, String value) {
      Map<String, String> more = new java.util.LinkedHashMap<>(headers);
      more.put(name, value);
      return new Reply(
          status, body, delayMillis, Map.copyOf(more), trickleMillis, stall, breakAfter);
    }
  }

  private final Flavor flavor;
  private final HttpServer server;
  private final List<String> models;
  private final ConcurrentLinkedQueue<Reply> script = new ConcurrentLinkedQueue<>();
  private final List<Request> requests = new CopyOnWriteArrayList<>();
  private volatile Supplier<Reply> fallback;
  private volatile String requiredKey;
  private volatile int streamPieces = 4;
  private volatile long streamGapMillis;

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

  /**
   * Answers 401, as the real providers do, to every request that does not carry {@code key}
   * (OpenAI: {@code Authorization: Bearer key}; Anthropic: {@code x-api-key: key}); still recorded.
   */
  public FakeLlmServer requireKey(String key) {
    this.requiredKey = key;
    return this;
  }

  /**
   * How a streamed answer's text is sent: in {@code pieces} deltas (or one per character for a
   * shorter text), {@code gapMillis} apart (a model that writes slowly). An answer asked for whole
   * then comes after as long ({@code pieces} x {@code gapMillis}): the model writes as slowly
   * either way.
   */
  public FakeLlmServer streaming(int pieces, long gapMillis) {
    this.streamPieces = pieces;
    this.streamGapMillis = gapMillis;
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
    return new Reply(
        reply.status(), reply.body(), millis, reply.headers(), reply.trickleMillis(), false, -1);
  }

  /** {@code reply}, its body sent one byte every {@code millisPerByte} (a trickling answer). */
  public static Reply trickle(long millisPerByte, Reply reply) {
    return new Reply(
        reply.status(),
        reply.body(),
        reply.delayMillis(),
        reply.headers(),
        millisPerByte,
        false,
        -1);
  }

  /** 200 and the headers, then no content until the client leaves (a provider that hangs). */
  public static Reply stallAfterHeaders() {
    return new Reply(200, "", 0, Map.of(), 0, true, -1);
  }

  /**
   * {@code reply} streamed, but the connection breaks after its first {@code textDeltas} text
   * deltas (a provider that fails mid-answer); a request that does not stream gets a broken body.
   */
  public static Reply breakingAfter(int textDeltas, Reply reply) {
    return new Reply(
        reply.status(), reply.body(), reply.delayMillis(), reply.headers(), 0, false, textDeltas);
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
    long received = System.nanoTime();
    byte[] raw = exchange.getRequestBody().readAllBytes();
    JsonNode body = raw.length == 0 ? null : JSON.readTree(raw);
    Request request =
        new Request(
            method,
            path,
            Map.copyOf(exchange.getRequestHeaders()),
            body,
            received,
            new CompletableFuture<>());
    requests.add(request);
    try {
      if (requiredKey != null && !carriesKey(request, requiredKey)) {
        respond(exchange, unauthorized(), request);
      } else if (method.equals("GET") && path.equals("/v1/models")) {
        ObjectNode list = JSON.createObjectNode();
        list.put("object", "list");
        ArrayNode data = list.putArray("data");
        models.forEach(m -> data.addObject().put("id", m).put("object", "model"));
        respond(exchange, new Reply(200, list.toString(), 0), request);
      } else if (method.equals("GET") && path.startsWith("/v1/models/")) {
        String id = path.substring("/v1/models/".length());
        respond(
            exchange,
            models.contains(id)
                ? new Reply(200, "{\"id\":\"" + id + "\",\"type\":\"model\"}", 0)
                : new Reply(
                    404, "{\"type\":\"error\",\"error\":{\"type\":\"not_found_error\"}}", 0),
            request);
      } else if (method.equals("POST")
          && (path.equals("/v1/chat/completions") || path.equals("/v1/messages"))) {
        Reply next = script.poll();
        respond(exchange, next != null ? next : fallback.get(), request);
      } else {
        respond(exchange, new Reply(404, "{}", 0), request);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private boolean carriesKey(Request request, String key) {
    return flavor == Flavor.OPENAI
        ? ("Bearer " + key).equals(request.header("Authorization"))
        : key.equals(request.header("x-api-key"));
  }

  /** The provider's own answer to a missing or wrong key. */
  private Reply unauthorized() {
    return flavor == Flavor.OPENAI
        ? new Reply(
            401,
            "{\"error\":{\"message\":\"Incorrect API key provided\",\"type\":"
                + "\"invalid_request_error\",\"param\":null,\"code\":\"invalid_api_key\"}}",
            0)
        : new Reply(
            401,
            "{\"type\":\"error\",\"error\":{\"type\":\"authentication_error\","
                + "\"message\":\"invalid x-api-key\"}}",
            0);
  }

  private void respond(HttpExchange exchange, Reply reply, Request request)
      throws IOException, InterruptedException {
    if (reply.delayMillis() > 0) {
      Thread.sleep(reply.delayMillis());
    }
    List<Event> events = streamed(request, reply);
    if (events != null) {
      stream(exchange, events, reply.breakAfter(), request);
      return;
    }
    if (request.method().equals("POST") && reply.status() == 200 && streamGapMillis > 0) {
      Thread.sleep(streamPieces * streamGapMillis); // the whole answer, written as slowly
    }
    byte[] bytes = reply.body().getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().add("Content-Type", "application/json");
    reply.headers().forEach((name, value) -> exchange.getResponseHeaders().add(name, value));
    try {
      if (reply.stall()) {
        exchange.sendResponseHeaders(200, 0);
        OutputStream out = exchange.getResponseBody();
        long end = System.nanoTime() + TimeUnit.MINUTES.toNanos(10);
        while (System.nanoTime() < end) {
          out.write(' ');
          out.flush();
          Thread.sleep(100);
        }
      } else if (reply.trickleMillis() > 0) {
        exchange.sendResponseHeaders(reply.status(), bytes.length);
        OutputStream out = exchange.getResponseBody();
        for (byte b : bytes) {
          out.write(b);
          out.flush();
          Thread.sleep(reply.trickleMillis());
        }
      } else if (reply.breakAfter() >= 0) {
        exchange.sendResponseHeaders(reply.status(), bytes.length);
        exchange.getResponseBody().write(bytes, 0, bytes.length / 2);
        exchange.getResponseBody().flush();
      } else {
        exchange.sendResponseHeaders(reply.status(), bytes.length);
        exchange.getResponseBody().write(bytes);
      }
    } catch (IOException e) {
      request.abandoned().complete(null); // the client gave up (a timeout, a cancel)
    } finally {
      exchange.close();
    }
  }

  // ---- streaming

  /** One server-sent event; {@code text} when it carries a piece of the answer's text. */
  private record Event(String name, String data, boolean text) {
    byte[] bytes() {
      return ((name == null ? "" : "event: " + name + "\n") + "data: " + data + "\n\n")
          .getBytes(StandardCharsets.UTF_8);
    }
  }

  /** The events streaming {@code reply}, or null when it is sent as it is. */
  private List<Event> streamed(Request request, Reply reply) {
    if (request.body() == null
        || !request.body().path("stream").asBoolean(false)
        || reply.status() != 200
        || reply.stall()) {
      return null;
    }
    JsonNode answer;
    try {
      answer = JSON.readTree(reply.body());
    } catch (IOException e) {
      return null; // not an answer (garbage): sent as it is
    }
    if (flavor == Flavor.OPENAI) {
      return answer.has("choices")
          ? openAiEvents(answer, request.body().path("stream_options").path("include_usage"))
          : null;
    }
    return answer.path("type").asText().equals("message") ? anthropicEvents(answer) : null;
  }

  private List<Event> openAiEvents(JsonNode answer, JsonNode includeUsage) {
    List<Event> events = new ArrayList<>();
    JsonNode choice = answer.get("choices").get(0);
    JsonNode message = choice.get("message");
    events.add(openAiChunk(answer, JSON.createObjectNode().put("role", "assistant"), null, false));
    for (String piece : pieces(message.path("content").asText(""))) {
      events.add(openAiChunk(answer, JSON.createObjectNode().put("content", piece), null, true));
    }
    int index = 0;
    for (JsonNode call : message.path("tool_calls")) {
      ObjectNode start = JSON.createObjectNode();
      ObjectNode first = start.putArray("tool_calls").addObject();
      first.put("index", index);
      first.put("id", call.get("id").asText());
      first.put("type", "function");
      first
          .putObject("function")
          .put("name", call.at("/function/name").asText())
          .put("arguments", "");
      events.add(openAiChunk(answer, start, null, false));
      for (String piece : pieces(call.at("/function/arguments").asText())) {
        ObjectNode more = JSON.createObjectNode();
        ObjectNode next = more.putArray("tool_calls").addObject();
        next.put("index", index);
        next.putObject("function").put("arguments", piece);
        events.add(openAiChunk(answer, more, null, false));
      }
      index++;
    }
    events.add(
        openAiChunk(answer, JSON.createObjectNode(), choice.get("finish_reason").asText(), false));
    if (includeUsage.asBoolean(false) && answer.has("usage")) {
      ObjectNode usage = chunkEnvelope(answer);
      usage.putArray("choices");
      usage.set("usage", answer.get("usage"));
      events.add(new Event(null, usage.toString(), false));
    }
    events.add(new Event(null, "[DONE]", false));
    return events;
  }

  private static Event openAiChunk(JsonNode answer, ObjectNode delta, String finish, boolean text) {
    ObjectNode chunk = chunkEnvelope(answer);
    ObjectNode choice = chunk.putArray("choices").addObject();
    choice.put("index", 0);
    choice.set("delta", delta);
    if (finish == null) {
      choice.putNull("finish_reason");
    } else {
      choice.put("finish_reason", finish);
    }
    chunk.putNull("usage");
    return new Event(null, chunk.toString(), text);
  }

  private static ObjectNode chunkEnvelope(JsonNode answer) {
    ObjectNode chunk = JSON.createObjectNode();
    chunk.put("id", answer.get("id").asText());
    chunk.put("object", "chat.completion.chunk");
    chunk.put("created", answer.get("created").asLong());
    chunk.put("model", answer.get("model").asText());
    return chunk;
  }

  private List<Event> anthropicEvents(JsonNode answer) {
    List<Event> events = new ArrayList<>();
    ObjectNode start = JSON.createObjectNode().put("type", "message_start");
    ObjectNode message = start.putObject("message");
    message.put("id", answer.get("id").asText());
    message.put("type", "message");
    message.put("role", "assistant");
    message.put("model", answer.get("model").asText());
    message.putArray("content");
    message.putNull("stop_reason");
    message.putNull("stop_sequence");
    ObjectNode usage = ((ObjectNode) answer.get("usage")).deepCopy();
    usage.put("output_tokens", 1);
    message.set("usage", usage);
    events.add(new Event("message_start", start.toString(), false));
    int index = 0;
    for (JsonNode block : answer.get("content")) {
      boolean text = block.get("type").asText().equals("text");
      ObjectNode blockStart = JSON.createObjectNode().put("type", "content_block_start");
      blockStart.put("index", index);
      ObjectNode opened = blockStart.putObject("content_block");
      if (text) {
        opened.put("type", "text").put("text", "");
      } else {
        opened.put("type", "tool_use").put("id", block.get("id").asText());
        opened.put("name", block.get("name").asText()).putObject("input");
      }
      events.add(new Event("content_block_start", blockStart.toString(), false));
      for (String piece :
          pieces(text ? block.get("text").asText() : block.get("input").toString())) {
        ObjectNode delta = JSON.createObjectNode().put("type", "content_block_delta");
        delta.put("index", index);
        if (text) {
          delta.putObject("delta").put("type", "text_delta").put("text", piece);
        } else {
          delta.putObject("delta").put("type", "input_json_delta").put("partial_json", piece);
        }
        events.add(new Event("content_block_delta", delta.toString(), text));
      }
      events.add(
          new Event(
              "content_block_stop",
              JSON.createObjectNode()
                  .put("type", "content_block_stop")
                  .put("index", index)
                  .toString(),
              false));
      index++;
    }
    ObjectNode end = JSON.createObjectNode().put("type", "message_delta");
    end.putObject("delta")
        .put("stop_reason", answer.get("stop_reason").asText())
        .putNull("stop_sequence");
    end.putObject("usage").put("output_tokens", answer.at("/usage/output_tokens").asInt());
    events.add(new Event("message_delta", end.toString(), false));
    events.add(new Event("message_stop", "{\"type\":\"message_stop\"}", false));
    return events;
  }

  /** {@code text} cut into the configured number of pieces (fewer for a shorter text). */
  private List<String> pieces(String text) {
    List<String> pieces = new ArrayList<>();
    if (text.isEmpty()) {
      return pieces;
    }
    int count = Math.min(streamPieces, text.length());
    for (int i = 0; i < count; i++) {
      pieces.add(text.substring(i * text.length() / count, (i + 1) * text.length() / count));
    }
    return pieces;
  }

  /**
   * Sends {@code events}, the configured gap before each text delta; with {@code breakAfter} >= 0,
   * the connection breaks after that many text deltas: the declared length is never reached, so the
   * client reads a premature end of the answer, as when a provider's connection drops.
   */
  private void stream(HttpExchange exchange, List<Event> events, int breakAfter, Request request)
      throws InterruptedException {
    List<byte[]> encoded = events.stream().map(Event::bytes).toList();
    long length = encoded.stream().mapToLong(b -> b.length).sum();
    exchange.getResponseHeaders().add("Content-Type", "text/event-stream");
    try {
      exchange.sendResponseHeaders(200, length);
      OutputStream out = exchange.getResponseBody();
      int texts = 0;
      for (int i = 0; i < events.size(); i++) {
        if (events.get(i).text()) {
          if (texts == breakAfter) {
            break;
          }
          texts++;
          if (streamGapMillis > 0) {
            Thread.sleep(streamGapMillis);
          }
        }
        out.write(encoded.get(i));
        out.flush();
      }
    } catch (IOException e) {
      request.abandoned().complete(null); // the client gave up (a timeout, a cancel)
    } finally {
      exchange.close(); // short of the declared length, this closes the connection
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
