package ca.helu.pallas.runtime.it;

import static org.assertj.core.api.Assertions.assertThat;

import ca.helu.pallas.runtime.testing.RawMcp;
import ca.helu.pallas.runtime.testing.RunningFleet;
import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.slf4j.LoggerFactory;

/**
 * Requests the MCP transport refuses leave as clean JSON-RPC errors (issue 8 §1, §7): the right
 * HTTP status, {@code {"jsonrpc","id","error":{"code","message"}}} with the request's id when it
 * has one, a message of ours, and nothing else: no serialized exception, class name or stack frame.
 * TRACE echoes nothing. The agent keeps serving afterwards.
 */
class HostileInputIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient HTTP = HttpClient.newHttpClient();
  private static final String ACCEPT = "application/json, text/event-stream";
  private static RunningFleet fleet;
  private static String session;

  @BeforeAll
  static void start() throws Exception {
    fleet =
        RunningFleet.start(
            """
            apiVersion: pallas.helu.ca/v1alpha1
            kind: PallasDeployment
            metadata: {name: hostile}
            spec:
              registry: {port: ${port:registry}}
              defaultModel: passthrough
              modelCapabilities: {vision: true}
              agents: [{name: a, port: ${port:a}}]
            """);
    errors.start();
    ((Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME)).addAppender(errors);
    session = RawMcp.open(fleet.mcpUrl("a"), null).session();
    RawMcp deleted = RawMcp.open(fleet.mcpUrl("a"), null);
    deletedSession = deleted.session();
    assertThat(deleted.delete()).isLessThan(300);
  }

  /** A session that existed and was deleted by its client. */
  private static String deletedSession;

  /** Every line logged while this class's hostile requests were answered. */
  private static final ListAppender<ILoggingEvent> errors = new ListAppender<>();

  /**
   * A client's mistakes are logged at DEBUG or INFO, never as errors (issue 16 §4): none of the
   * requests above, nor their answers, made an ERROR line.
   */
  @AfterAll
  static void stop() {
    fleet.close();
    ((Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME)).detachAppender(errors);
    assertThat(errors.list)
        .filteredOn(e -> e.getLevel().isGreaterOrEqual(Level.ERROR))
        .extracting(ILoggingEvent::getFormattedMessage)
        .isEmpty();
  }

  record Case(
      String name,
      String method,
      Map<String, String> headers,
      String body,
      int status,
      int code,
      Object id) {
    @Override
    public String toString() {
      return name;
    }
  }

  static List<Case> cases() {
    Map<String, String> json = Map.of("Content-Type", "application/json", "Accept", ACCEPT);
    Map<String, String> inSession =
        Map.of("Content-Type", "application/json", "Accept", ACCEPT, "Mcp-Session-Id", "SESSION");
    return List.of(
        new Case("malformed JSON", "POST", json, "{bad", 400, -32700, null),
        new Case("empty body", "POST", json, "", 400, -32700, null),
        new Case("null body", "POST", json, "null", 400, -32600, null),
        new Case("a number", "POST", json, "42", 400, -32600, null),
        new Case(
            "a batch",
            "POST",
            json,
            "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]",
            400,
            -32600,
            null),
        new Case(
            "jsonrpc 1.0",
            "POST",
            json,
            "{\"jsonrpc\":\"1.0\",\"id\":4,\"method\":\"ping\"}",
            400,
            -32600,
            4),
        new Case("no method", "POST", json, "{\"jsonrpc\":\"2.0\",\"id\":5}", 400, -32600, 5),
        new Case(
            "initialize without params",
            "POST",
            json,
            "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"initialize\"}",
            400,
            -32602,
            6),
        new Case(
            "tools/call without params",
            "POST",
            inSession,
            "{\"jsonrpc\":\"2.0\",\"id\":\"seven\",\"method\":\"tools/call\"}",
            400,
            -32602,
            "seven"),
        new Case(
            "tools/call with string arguments",
            "POST",
            inSession,
            "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\","
                + "\"params\":{\"name\":\"send_message\",\"arguments\":\"hi\"}}",
            400,
            -32602,
            8),
        new Case(
            "wrong Content-Type",
            "POST",
            Map.of("Content-Type", "text/plain", "Accept", ACCEPT),
            "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}",
            415,
            -32600,
            9),
        new Case(
            "no Accept",
            "POST",
            Map.of("Content-Type", "application/json"),
            "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"tools/list\"}",
            400,
            -32600,
            10),
        new Case(
            "no session",
            "POST",
            json,
            "{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"tools/list\"}",
            400,
            -32600,
            11),
        new Case(
            "unknown session",
            "POST",
            Map.of("Content-Type", "application/json", "Accept", ACCEPT, "Mcp-Session-Id", "nope"),
            "{\"jsonrpc\":\"2.0\",\"id\":12,\"method\":\"tools/list\"}",
            404,
            -32600,
            12),
        new Case(
            "DELETE of an unknown session",
            "DELETE",
            Map.of("Mcp-Session-Id", "nope"),
            null,
            404,
            -32600,
            null),
        new Case(
            "GET of an unknown session",
            "GET",
            Map.of("Accept", "text/event-stream", "Mcp-Session-Id", "nope"),
            null,
            404,
            -32600,
            null),
        new Case(
            "unsupported MCP-Protocol-Version",
            "POST",
            Map.of(
                "Content-Type",
                "application/json",
                "Accept",
                ACCEPT,
                "Mcp-Session-Id",
                "SESSION",
                "MCP-Protocol-Version",
                "1999-01-01"),
            "{\"jsonrpc\":\"2.0\",\"id\":13,\"method\":\"tools/list\"}",
            400,
            -32600,
            null),
        new Case(
            "logging/setLevel with a bogus level",
            "POST",
            inSession,
            "{\"jsonrpc\":\"2.0\",\"id\":14,\"method\":\"logging/setLevel\","
                + "\"params\":{\"level\":\"loud\"}}",
            400,
            -32602,
            14),
        new Case("PUT", "PUT", json, "{}", 405, -32600, null),
        new Case("PATCH", "PATCH", json, "{}", 405, -32600, null),
        new Case("OPTIONS", "OPTIONS", Map.of(), null, 405, -32600, null),
        new Case(
            "no Content-Type",
            "POST",
            Map.of("Accept", ACCEPT),
            "{\"jsonrpc\":\"2.0\",\"id\":15,\"method\":\"ping\"}",
            415,
            -32600,
            15),
        new Case(
            "Accept without text/event-stream",
            "POST",
            Map.of("Content-Type", "application/json", "Accept", "application/json"),
            "{\"jsonrpc\":\"2.0\",\"id\":16,\"method\":\"tools/list\"}",
            400,
            -32600,
            16),
        new Case(
            "an object id",
            "POST",
            inSession,
            "{\"jsonrpc\":\"2.0\",\"id\":{\"a\":1},\"method\":\"ping\"}",
            400,
            -32600,
            Map.of("a", 1)),
        new Case(
            "a fractional id",
            "POST",
            inSession,
            "{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}",
            400,
            -32600,
            1.5),
        new Case(
            "a numeric method",
            "POST",
            inSession,
            "{\"jsonrpc\":\"2.0\",\"id\":17,\"method\":7}",
            400,
            -32600,
            17),
        new Case(
            "params as an array",
            "POST",
            inSession,
            "{\"jsonrpc\":\"2.0\",\"id\":18,\"method\":\"tools/list\",\"params\":[]}",
            400,
            -32602,
            18),
        new Case(
            "prompts/get without params",
            "POST",
            inSession,
            "{\"jsonrpc\":\"2.0\",\"id\":19,\"method\":\"prompts/get\"}",
            400,
            -32602,
            19),
        new Case(
            "an unsolicited response",
            "POST",
            inSession,
            "{\"jsonrpc\":\"2.0\",\"id\":99,\"result\":{}}",
            400,
            -32600,
            99),
        new Case(
            "a deleted session",
            "POST",
            Map.of(
                "Content-Type", "application/json", "Accept", ACCEPT, "Mcp-Session-Id", "DELETED"),
            "{\"jsonrpc\":\"2.0\",\"id\":20,\"method\":\"tools/list\"}",
            404,
            -32600,
            20),
        new Case("DELETE without a session", "DELETE", Map.of(), null, 400, -32600, null),
        // params of the wrong type anywhere in them (issue 16 §4): the SDK answered none of these
        wrongType(
            "tools/call _meta a string",
            "tools/call",
            "{\"name\":\"get_health\",\"arguments\":{},\"_meta\":\"x\"}",
            21),
        wrongType(
            "send_message _meta a number",
            "tools/call",
            "{\"name\":\"send_message\",\"arguments\":{\"message\":\"hi\"},\"_meta\":7}",
            22),
        wrongType("tools/list _meta an array", "tools/list", "{\"_meta\":[]}", 23),
        wrongType("tools/list cursor an object", "tools/list", "{\"cursor\":{}}", 24),
        wrongType("prompts/list _meta a boolean", "prompts/list", "{\"_meta\":true}", 25),
        wrongType(
            "prompts/get arguments a string",
            "prompts/get",
            "{\"name\":\"a_history\",\"arguments\":\"x\"}",
            26),
        wrongType(
            "prompts/get arguments an array",
            "prompts/get",
            "{\"name\":\"a_history\",\"arguments\":[1]}",
            27),
        wrongType("prompts/get name an object", "prompts/get", "{\"name\":{}}", 28),
        new Case(
            "initialize capabilities a string",
            "POST",
            json,
            "{\"jsonrpc\":\"2.0\",\"id\":30,\"method\":\"initialize\",\"params\":{"
                + "\"protocolVersion\":\"2025-06-18\",\"capabilities\":\"all\","
                + "\"clientInfo\":{\"name\":\"x\",\"version\":\"1\"}}}",
            400,
            -32602,
            30),
        new Case(
            "initialize clientInfo a number",
            "POST",
            json,
            "{\"jsonrpc\":\"2.0\",\"id\":31,\"method\":\"initialize\",\"params\":{"
                + "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":5}}",
            400,
            -32602,
            31),
        new Case(
            "initialize _meta a string",
            "POST",
            json,
            "{\"jsonrpc\":\"2.0\",\"id\":32,\"method\":\"initialize\",\"params\":{"
                + "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
                + "\"clientInfo\":{\"name\":\"x\",\"version\":\"1\"},\"_meta\":\"m\"}}",
            400,
            -32602,
            32));
  }

  /** A request on the test's session whose params hold a field of the wrong type. */
  private static Case wrongType(String name, String method, String params, int id) {
    return new Case(
        name,
        "POST",
        Map.of("Content-Type", "application/json", "Accept", ACCEPT, "Mcp-Session-Id", "SESSION"),
        "{\"jsonrpc\":\"2.0\",\"id\":"
            + id
            + ",\"method\":\""
            + method
            + "\",\"params\":"
            + params
            + "}",
        400,
        -32602,
        id);
  }

  @ParameterizedTest
  @MethodSource("cases")
  void aRefusalIsAJsonRpcErrorAndNothingElse(Case c) throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create(fleet.mcpUrl("a")))
            .method(
                c.method(),
                c.body() == null
                    ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofString(c.body()));
    c.headers()
        .forEach((k, v) ->
            b.header(k, v.equals("SESSION") ? session : v.equals("DELETED") ? deletedSession : v));
    HttpResponse<String> r = HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());

    assertThat(r.statusCode()).as(r.body()).isEqualTo(c.status());
    assertThat(r.headers().firstValue("content-type").orElse("")).startsWith("application/json");
    assertThat(r.body())
        .doesNotContain("stackTrace", "Exception", ".java", "io.modelcontextprotocol", "jackson");
    JsonNode body = JSON.readTree(r.body());
    assertThat(fieldNames(body)).containsExactly("jsonrpc", "id", "error");
    assertThat(body.get("jsonrpc").asText()).isEqualTo("2.0");
    assertThat(fieldNames(body.get("error"))).containsExactly("code", "message");
    assertThat(body.at("/error/code").asInt()).isEqualTo(c.code());
    assertThat(body.at("/error/message").asText()).isNotBlank();
    if (c.id() == null) {
      assertThat(body.get("id").isNull()).isTrue();
    } else {
      assertThat(body.get("id")).isEqualTo(JSON.valueToTree(c.id()));
    }
  }

  /** Mistakes inside a valid session: one JSON-RPC error (or tool error) for the id, named. */
  static List<Object[]> inSession() {
    String image = "{\"data\":\"%s\",\"mime_type\":\"%s\"}";
    return List.of(
        new Object[] {"an unknown method", "{\"method\":\"no/such\"}", -32601, "no/such"},
        new Object[] {
          "completion/complete (not offered)",
          "{\"method\":\"completion/complete\",\"params\":{\"ref\":{\"type\":\"ref/prompt\","
              + "\"name\":\"a_history\"},\"argument\":{\"name\":\"x\",\"value\":\"y\"}}}",
          -32601,
          "completion/complete"
        },
        new Object[] {
          // resources are offered since issue 20 §2: one the agent does not have is named
          "an unknown resource",
          "{\"method\":\"resources/read\",\"params\":{\"uri\":\"pallas://agents/a/nope\"}}",
          -32002,
          "Resource not found"
        },
        new Object[] {
          // the SDK would keep it as a subscription until the session ends: one per request
          "a subscription to an unknown resource",
          "{\"method\":\"resources/subscribe\",\"params\":{\"uri\":\"pallas://agents/a/nope\"}}",
          -32002,
          "Resource not found"
        },
        new Object[] {"an unknown tool", call("no_such_tool", "{}"), -32602, "Unknown tool"},
        new Object[] {
          "an unknown prompt",
          "{\"method\":\"prompts/get\",\"params\":{\"name\":\"nope\"}}",
          -32602,
          "prompt"
        },
        new Object[] {
          "send_message without message", call("send_message", "{}"), 0, "'message' is required"
        },
        new Object[] {
          "an empty message", call("send_message", "{\"message\":\"  \"}"), 0, "must not be empty"
        },
        new Object[] {
          "a numeric message", call("send_message", "{\"message\":5}"), 0, "must be a string"
        },
        new Object[] {
          "an unknown argument",
          call("send_message", "{\"message\":\"x\",\"temperature\":2}"),
          0,
          "unknown argument 'temperature'"
        },
        new Object[] {
          "images not a list",
          call("send_message", "{\"message\":\"x\",\"images\":\"cat.png\"}"),
          0,
          "'images' must be a list"
        },
        new Object[] {
          "an image that is not base64",
          call(
              "send_message",
              "{\"message\":\"x\",\"images\":[" + image.formatted("%%%", "image/png") + "]}"),
          0,
          "base64"
        },
        new Object[] {
          "an unsupported image type",
          call(
              "send_message",
              "{\"message\":\"x\",\"images\":[" + image.formatted("AAAA", "image/tiff") + "]}"),
          0,
          "image/tiff"
        });
  }

  private static String call(String tool, String arguments) {
    return "{\"method\":\"tools/call\",\"params\":{\"name\":\""
        + tool
        + "\",\"arguments\":"
        + arguments
        + "}}";
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("inSession")
  void aMistakeInASessionGetsOneNamedAnswer(String name, String message, int code, String names)
      throws Exception {
    String body = "{\"jsonrpc\":\"2.0\",\"id\":\"m\"," + message.substring(1);
    HttpResponse<String> r = HTTP.send(postInSession(body), HttpResponse.BodyHandlers.ofString());
    assertThat(r.body()).doesNotContain("stackTrace", "Exception", ".java");
    List<JsonNode> answers = new ArrayList<>();
    for (String line : r.body().split("\n")) {
      String data = line.startsWith("data:") ? line.substring(5).strip() : line.strip();
      if (data.startsWith("{")) {
        answers.add(JSON.readTree(data));
      }
    }
    assertThat(answers).as(r.body()).hasSize(1);
    JsonNode answer = answers.get(0);
    assertThat(answer.get("id").asText()).isEqualTo("m");
    if (code != 0) {
      assertThat(answer.at("/error/code").asInt()).isEqualTo(code);
      assertThat(answer.toString()).contains(names);
    } else {
      assertThat(answer.at("/result/isError").asBoolean()).isTrue();
      assertThat(answer.at("/result/content/0/text").asText()).contains(names);
    }
  }

  /** A JSON-RPC POST on the test's session. */
  private static HttpRequest postInSession(String body) {
    return HttpRequest.newBuilder(URI.create(fleet.mcpUrl("a")))
        .header("Content-Type", "application/json")
        .header("Accept", ACCEPT)
        .header("Mcp-Session-Id", session)
        .timeout(Duration.ofSeconds(10))
        .POST(HttpRequest.BodyPublishers.ofString(body))
        .build();
  }

  /** Bad and good requests at once: every one is answered, within a bound. */
  @Test
  void aBurstOfBadAndGoodRequestsIsAllAnswered() throws Exception {
    List<CompletableFuture<HttpResponse<String>>> answers = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      String body =
          i % 2 == 0
              ? "{\"jsonrpc\":\"2.0\",\"id\":"
                  + i
                  + ",\"method\":\"tools/call\","
                  + "\"params\":{\"name\":\"get_health\",\"arguments\":{}}}"
              : List.of("{bad", "null", "[]", "{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"x\"}")
                  .get(i % 4 == 1 ? 0 : i % 8 == 3 ? 1 : i % 8 == 7 ? 2 : 3);
      answers.add(HTTP.sendAsync(postInSession(body), HttpResponse.BodyHandlers.ofString()));
    }
    for (int i = 0; i < answers.size(); i++) {
      HttpResponse<String> r = answers.get(i).get(15, TimeUnit.SECONDS);
      assertThat(r.statusCode())
          .as("request %d: %s", i, r.body())
          .isEqualTo(i % 2 == 0 ? 200 : 400);
      assertThat(r.body()).contains(i % 2 == 0 ? "\"isError\":false" : "\"error\"");
    }
  }

  /**
   * A response to a request this server never sent is refused at the edge, without the ERROR line
   * the SDK would log for it (issue 8 §6: a client's mistake is no fault of ours).
   */
  @Test
  void anUnsolicitedResponseIsRefusedWithoutAnErrorLogged() throws Exception {
    ListAppender<ILoggingEvent> log = new ListAppender<>();
    log.start();
    Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    root.addAppender(log);
    try {
      for (String response :
          List.of(
              "{\"jsonrpc\":\"2.0\",\"id\":99,\"result\":{}}",
              "{\"jsonrpc\":\"2.0\",\"id\":\"x-1\",\"error\":{\"code\":1,\"message\":\"m\"}}")) {
        HttpResponse<String> r =
            HTTP.send(postInSession(response), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(400);
        assertThat(JSON.readTree(r.body()).at("/error/message").asText())
            .contains("awaits no response with this id");
      }
      // an id of the form of the server's own pings reaches the SDK, which awaits no such ping
      HttpResponse<String> r =
          HTTP.send(
              postInSession(
                  "{\"jsonrpc\":\"2.0\",\"id\":\"" + session + "-424242\",\"result\":{}}"),
              HttpResponse.BodyHandlers.ofString());
      assertThat(r.statusCode()).as(r.body()).isBetween(200, 499);
      assertThat(r.body()).doesNotContain("Exception");
    } finally {
      root.detachAppender(log);
    }
    assertThat(log.list)
        .filteredOn(e -> e.getLevel().isGreaterOrEqual(Level.ERROR))
        .extracting(ILoggingEvent::getFormattedMessage)
        .isEmpty();
  }

  @Test
  void aParamOfTheWrongTypeIsNamedInTheAnswer() throws Exception {
    HttpResponse<String> r =
        HTTP.send(
            postInSession(
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"prompts/get\","
                    + "\"params\":{\"name\":\"a_history\",\"arguments\":\"x\"}}"),
            HttpResponse.BodyHandlers.ofString());
    assertThat(JSON.readTree(r.body()).at("/error/message").asText())
        .isEqualTo("Invalid params: prompts/get params.arguments must be an object");
  }

  /**
   * Client notifications the agent does not act on are accepted (202, no body) on a session that
   * exists, whatever they hold (issue 16 §4): notifications/roots/list_changed made the SDK ask the
   * client for its roots and answer 500, and an unknown one was logged whole at WARN.
   */
  @Test
  void clientNotificationsAreAcceptedAndNothingOfThemIsLogged() throws Exception {
    ListAppender<ILoggingEvent> log = new ListAppender<>();
    log.start();
    Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    root.addAppender(log);
    String big = "n".repeat(2 << 20);
    try {
      for (String notification :
          List.of(
              "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/roots/list_changed\"}",
              "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\","
                  + "\"params\":{\"progressToken\":1,\"progress\":1}}",
              "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/no_such_thing\"}",
              "{\"jsonrpc\":\"2.0\",\"method\":\"x/y\",\"params\":{\"big\":\"" + big + "\"}}")) {
        HttpResponse<String> r =
            HTTP.send(postInSession(notification), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(202);
        assertThat(r.body()).isEmpty();
      }
    } finally {
      root.detachAppender(log);
    }
    assertThat(log.list)
        .extracting(ILoggingEvent::getFormattedMessage)
        .allSatisfy(line -> assertThat(line).hasSizeLessThan(4096).doesNotContain("nnnnnnnn"));
    assertThat(log.list).noneMatch(e -> e.getLevel().isGreaterOrEqual(Level.WARN));

    // on no session or an unknown one, the same refusals as a request's
    String roots = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/roots/list_changed\"}";
    HttpResponse<String> unknown =
        HTTP.send(
            HttpRequest.newBuilder(URI.create(fleet.mcpUrl("a")))
                .header("Content-Type", "application/json")
                .header("Accept", ACCEPT)
                .header("Mcp-Session-Id", "nope")
                .POST(HttpRequest.BodyPublishers.ofString(roots))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(unknown.statusCode()).isEqualTo(404);
    assertThat(JSON.readTree(unknown.body()).at("/error/message").asText())
        .contains("no such session");
  }

  /**
   * A bearer token travels byte for byte or not at all (issue 16 §5): bytes outside RFC 6750's
   * token characters became '?' on the way downstream, so two tokens became one. They are refused.
   */
  @Test
  void aBearerWithBytesATokenCannotHoldIsRefused() throws Exception {
    for (byte[] token :
        List.of(
            "t\u00e9".getBytes(StandardCharsets.ISO_8859_1),
            "t\u00e9".getBytes(StandardCharsets.UTF_8),
            "a b".getBytes(StandardCharsets.US_ASCII))) {
      String ping = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}";
      byte[] head =
          ("POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAccept: "
                  + ACCEPT
                  + "\r\nMcp-Session-Id: "
                  + session
                  + "\r\nContent-Length: "
                  + ping.length()
                  + "\r\nConnection: close\r\nAuthorization: Bearer ")
              .getBytes(StandardCharsets.US_ASCII);
      byte[] tail = ("\r\n\r\n" + ping).getBytes(StandardCharsets.US_ASCII);
      byte[] request = new byte[head.length + token.length + tail.length];
      System.arraycopy(head, 0, request, 0, head.length);
      System.arraycopy(token, 0, request, head.length, token.length);
      System.arraycopy(tail, 0, request, head.length + token.length, tail.length);
      String answer = raw(request);
      assertThat(answer)
          .startsWith("HTTP/1.1 400")
          .contains("\"code\":-32600", "bearer token", "RFC 6750")
          .doesNotContain("t\u00e9");
    }
    // a token of RFC 6750's characters passes
    assertThat(RawMcp.open(fleet.mcpUrl("a"), "Zm9v-._~+/bar==").session()).isNotBlank();
  }

  @Test
  void traceEchoesNothingAnywhere() throws Exception {
    for (String path : List.of("/mcp", "/anything", "/metrics")) {
      String answer =
          raw(
              "TRACE "
                  + path
                  + " HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer s3cret\r\n"
                  + "Cookie: c=s3cret\r\nConnection: close\r\n\r\n");
      assertThat(answer).startsWith("HTTP/1.1 405").doesNotContain("s3cret");
    }
  }

  @Test
  void aBodyOverTheLimitIsRefusedBeforeItIsRead() throws Exception {
    for (String length : List.of("83886081", "900000000")) {
      String answer =
          raw(RawMcp.postHead("Content-Length: " + length + "\r\nConnection: close") + "{");
      assertThat(answer)
          .startsWith("HTTP/1.1 413")
          .contains("\"code\":-32600", "at most 80 MiB")
          .doesNotContain("Exception");
    }
  }

  @Test
  void aChunkedBodyOverTheLimitIsRefusedOnceItPassesIt() throws Exception {
    // 100 MiB, past the 80 MiB limit: the server stops reading once the limit is passed
    assertThat(RawMcp.chunkedPost(fleet.port("a"), 100))
        .startsWith("HTTP/1.1 413")
        .contains("at most 80 MiB");
  }

  /** Every limit of docs/runtime.md can be reached, and one past it is refused by name. */
  @Test
  void theLimitsAreReachableAndNamed() throws Exception {
    RawMcp mcp = RawMcp.open(fleet.mcpUrl("a"), null);
    // 10 images of 5 MiB, base64 (66.7 MiB), fit in a body
    String image = Base64.getEncoder().encodeToString(new byte[5 * 1024 * 1024]);
    List<Map<String, String>> images = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      images.add(Map.of("data", image, "mime_type", "image/png"));
    }
    JsonNode ten = mcp.callTool("send_message", Map.of("message", "ten", "images", images));
    assertThat(ten.get("isError").asBoolean()).as(ten.toString()).isFalse();
    images.add(Map.of("data", "AAAA", "mime_type", "image/png"));
    assertThat(RawMcp.text(mcp.callTool("send_message", Map.of("message", "x", "images", images))))
        .contains("at most 10 images");
    String bigImage = Base64.getEncoder().encodeToString(new byte[5 * 1024 * 1024 + 4]);
    assertThat(
            RawMcp.text(
                mcp.callTool(
                    "send_message",
                    Map.of(
                        "message",
                        "x",
                        "images",
                        List.of(Map.of("data", bigImage, "mime_type", "image/png"))))))
        .contains("larger than 5242880 bytes");
    // a message as long as the model reads (131072 tokens x 4), and one character more
    String longest = "m".repeat(131072 * 4);
    assertThat(mcp.callTool("send_message", Map.of("message", longest)).get("isError").asBoolean())
        .isFalse();
    assertThat(RawMcp.text(mcp.callTool("send_message", Map.of("message", longest + "m"))))
        .contains("at most 524288 fit");
    // a JSON string over Jackson's default 20,000,000 characters is the message limit's business
    assertThat(RawMcp.text(mcp.callTool("send_message", Map.of("message", "s".repeat(21_000_000)))))
        .contains("has 21000000 characters");
  }

  @Test
  void theAgentServesAfterwards() throws Exception {
    RawMcp mcp = RawMcp.open(fleet.mcpUrl("a"), null);
    assertThat(RawMcp.text(mcp.callTool("send_message", Map.of("message", "still here"))))
        .contains("still here");
  }

  private static String raw(String request) throws Exception {
    return raw(request.getBytes(StandardCharsets.US_ASCII));
  }

  private static String raw(byte[] request) throws Exception {
    try (Socket socket = new Socket("127.0.0.1", fleet.port("a"))) {
      OutputStream out = socket.getOutputStream();
      out.write(request);
      out.flush();
      InputStream in = socket.getInputStream();
      return new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
    }
  }

  private static List<String> fieldNames(JsonNode node) {
    List<String> names = new ArrayList<>();
    for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
      names.add(it.next());
    }
    return names;
  }
}
