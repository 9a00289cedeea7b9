package ca.helu.pallas.runtime.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.runtime.http.EdgeLimits;
import ca.helu.pallas.runtime.serve.DefaultAgentParts;
import ca.helu.pallas.runtime.testing.McpClients;
import ca.helu.pallas.runtime.testing.RawMcp;
import ca.helu.pallas.runtime.testing.RunningFleet;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelcontextprotocol.client.McpSyncClient;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The bounds of one agent's MCP endpoint (issue 8 §3, §4; docs/runtime.md, "Limits"): a session
 * past the cap is refused, an idle session is closed and then answered 404, a request past the
 * concurrency limit and a body past the bytes held are refused with 503 and Retry-After, while
 * /readyz and get_health keep answering; past the connections left for others only health requests
 * are answered, and past the connection cap a new connection waits while the probe port answers.
 */
class EdgeLimitsIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient HTTP = HttpClient.newHttpClient();
  private static final String MANIFEST =
      """
      apiVersion: pallas.helu.ca/v1alpha1
      kind: PallasDeployment
      metadata: {name: limits}
      spec:
        registry: {port: ${port:registry}}
        defaultModel: %s
        agents: [{name: a, port: ${port:a}, instanceScope: connection}]
      """;
  private static final String INITIALIZE =
      "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"
          + "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
          + "\"clientInfo\":{\"name\":\"raw\",\"version\":\"1\"}}}";

  private static final String GET_HEALTH =
      "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\","
          + "\"params\":{\"name\":\"get_health\",\"arguments\":{}}}";

  private static EdgeLimits limits(int sessions, Duration idle, int requests, long bodyBytesHeld) {
    return new EdgeLimits(sessions, idle, requests, 80L << 20, bodyBytesHeld, 4096, 64L << 20);
  }

  /** The default limits but {@code max} connections. */
  private static EdgeLimits connections(int max) {
    EdgeLimits d = EdgeLimits.DEFAULT;
    return new EdgeLimits(
        d.maxSessions(),
        d.sessionIdle(),
        d.maxConcurrentRequests(),
        d.maxBodyBytes(),
        d.maxBodyBytesHeld(),
        max,
        d.maxHistoryChars());
  }

  @Test
  void pastTheConnectionsLeftForOthersOnlyHealthIsAnsweredEachClosingItsConnection()
      throws Exception {
    try (RunningFleet fleet =
        RunningFleet.start(MANIFEST.formatted("passthrough"), o -> o.withLimits(connections(16)))) {
      int port = fleet.port("a");
      String session = initialize(port);
      // 16 less the 8 kept for health: each connection below is one of the reserve
      List<Socket> idle = openIdle(fleet, 8);
      try {
        // each answer below is read to the end: the server closes every connection it answers
        assertThat(
                exchange(
                    port,
                    rawPost(session, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/list\"}")))
            .startsWith("HTTP/1.1 503")
            .containsIgnoringCase("Retry-After: 1")
            .containsIgnoringCase("Connection: close")
            .contains("\"id\":7", "\"code\":-32000", "maximum of 16 connections");
        assertThat(exchange(port, rawPost(null, INITIALIZE)))
            .startsWith("HTTP/1.1 503")
            .contains("\"id\":0", "maximum of 16 connections");
        assertThat(exchange(port, get("/metrics")))
            .startsWith("HTTP/1.1 200")
            .containsIgnoringCase("Connection: close")
            .contains("pallas_http_connections{agent=\"a\"}");

        assertThat(exchange(port, get("/readyz")))
            .startsWith("HTTP/1.1 200")
            .containsIgnoringCase("Connection: close");
        assertThat(exchange(port, rawPost(session, GET_HEALTH)))
            .startsWith("HTTP/1.1 200")
            .containsIgnoringCase("Connection: close")
            .contains("\\\"status\\\"");
        assertThat(
                exchange(
                    port, rawPost(session, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}")))
            .startsWith("HTTP/1.1 200")
            .containsIgnoringCase("Connection: close")
            .contains("\"id\":9", "\"result\"");
      } finally {
        for (Socket socket : idle) {
          socket.close();
        }
      }
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> gauge(fleet, "pallas_http_connections") == 0);
      RawMcp client = RawMcp.open(fleet.mcpUrl("a"), null);
      assertThat(RawMcp.text(client.callTool("send_message", Map.of("message", "room again"))))
          .contains("room again");
    }
  }

  @Test
  void atTheCapANewConnectionWaitsForOneToCloseWhileTheProbePortAnswers() throws Exception {
    int probePort = RunningFleet.unboundPort();
    try (RunningFleet fleet =
        RunningFleet.start(
            MANIFEST.formatted("passthrough"),
            o -> o.withLimits(connections(16)).withProbePort("a", probePort))) {
      List<Socket> idle = openIdle(fleet, 16);
      try (Socket past = new Socket("127.0.0.1", fleet.port("a"))) { // queued in the kernel
        past.getOutputStream().write(get("/readyz").getBytes(StandardCharsets.US_ASCII));
        past.setSoTimeout(2000);
        assertThatThrownBy(() -> past.getInputStream().read())
            .isInstanceOf(SocketTimeoutException.class);
        assertThat(gauge(fleet, "pallas_http_connections")).isEqualTo(16);

        String probes = "http://127.0.0.1:" + probePort;
        assertThat(status(probes + "/readyz")).isEqualTo(200);
        assertThat(status(probes + "/livez")).isEqualTo(200);
        assertThat(status(probes + "/metrics")).isEqualTo(404);
        assertThat(status(probes + "/mcp")).isEqualTo(404);

        idle.remove(0).close(); // room for one: the queued connection is accepted and answered
        past.setSoTimeout(10_000);
        assertThat(new String(past.getInputStream().readAllBytes(), StandardCharsets.US_ASCII))
            .startsWith("HTTP/1.1 200")
            .containsIgnoringCase("Connection: close");
      } finally {
        for (Socket socket : idle) {
          socket.close();
        }
      }
    }
  }

  /**
   * At the session cap a new session takes the place of the least recently used idle one (issue 16
   * §4: a flood of initialize locked every new client out for the 30 minutes of the idle timeout);
   * a session with a call in progress is kept, and only while every session is busy is an
   * initialize refused.
   */
  @Test
  void atTheSessionCapTheOldestIdleSessionMakesRoom() throws Exception {
    EdgeLimits three = limits(3, Duration.ofMinutes(30), 512, 128L << 20);
    try (RunningFleet fleet =
        RunningFleet.start(MANIFEST.formatted("slow"), o -> o.withLimits(three))) {
      String url = fleet.mcpUrl("a");
      List<RawMcp> first = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        first.add(RawMcp.open(url, null));
      }
      // every session with a call in progress: no room, and nothing closed for it
      List<Iterator<String>> calls = new ArrayList<>();
      for (RawMcp session : first) {
        calls.add(callInProgress(url, session.session()));
      }
      HttpResponse<String> refused = post(url, INITIALIZE);
      assertThat(refused.statusCode()).isEqualTo(503);
      assertThat(refused.headers().firstValue("retry-after")).isPresent();
      JsonNode error = JSON.readTree(refused.body());
      assertThat(error.get("id").asInt()).isZero();
      assertThat(error.at("/error/message").asText())
          .contains("maximum of 3 sessions, each of them busy");
      for (Iterator<String> call : calls) {
        assertThat(answerOf(call)).contains("\"isError\":false");
      }

      // idle now: a new session takes the place of one of them (the least recently used, which
      // LiveSessionsTest shows), and only one
      RawMcp next = RawMcp.open(url, null);
      List<Integer> statuses = new ArrayList<>();
      for (RawMcp session : first) {
        statuses.add(status(session));
      }
      assertThat(statuses).containsExactlyInAnyOrder(404, 200, 200);

      // a flood of initialize: every one admitted, each taking the place of an idle session
      List<RawMcp> flood = new ArrayList<>();
      for (int i = 0; i < 30; i++) {
        flood.add(RawMcp.open(url, null));
      }
      assertThat(gauge(fleet, "pallas_mcp_sessions")).isEqualTo(3);
      assertThat(status(next)).isEqualTo(404);
      assertThat(status(flood.get(29))).isEqualTo(200);
    }
  }

  /** A ping's status on this session: 200 while it is open, 404 once it is closed. */
  private static int status(RawMcp session) throws Exception {
    return session.post("{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}").statusCode();
  }

  /**
   * A send_message on {@code session} whose turn has begun: its first progress notification has
   * arrived. The rest of its event stream follows.
   */
  private static Iterator<String> callInProgress(String url, String session) throws Exception {
    HttpResponse<Stream<String>> r =
        HTTP.send(
            HttpRequest.newBuilder(URI.create(url))
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream")
                .header("Mcp-Session-Id", session)
                .POST(
                    HttpRequest.BodyPublishers.ofString(
                        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{"
                            + "\"name\":\"send_message\",\"arguments\":{\"message\":\"wait\"},"
                            + "\"_meta\":{\"progressToken\":\"p\"}}}"))
                .build(),
            HttpResponse.BodyHandlers.ofLines());
    assertThat(r.statusCode()).isEqualTo(200);
    Iterator<String> lines = r.body().iterator();
    String line;
    do {
      line = lines.next();
    } while (!line.startsWith("data:"));
    assertThat(line).contains("notifications/progress");
    return lines;
  }

  /** The data of the event that answers the call, read from the rest of its stream. */
  private static String answerOf(Iterator<String> lines) {
    while (lines.hasNext()) {
      String line = lines.next();
      if (line.startsWith("data:") && line.contains("\"result\"")) {
        return line;
      }
    }
    return "";
  }

  @Test
  void anIdleSessionIsClosedAndThenAnswered404() throws Exception {
    Duration idle = Duration.ofSeconds(1);
    try (RunningFleet fleet =
        RunningFleet.start(
            MANIFEST.formatted("passthrough"),
            o -> o.withLimits(limits(100, idle, 512, 128L << 20)))) {
      // an SDK client keeps a stream open to listen: not idle, however long it says nothing
      McpSyncClient listening = McpClients.connect(fleet.mcpUrl("a"));
      RawMcp used = RawMcp.open(fleet.mcpUrl("a"), null);
      RawMcp quiet = RawMcp.open(fleet.mcpUrl("a"), null);
      assertThat(RawMcp.text(quiet.callTool("send_message", Map.of("message", "remember me"))))
          .contains("remember me");
      assertThat(gauge(fleet, "pallas_history_sessions")).isEqualTo(1);

      // a session used more often than its idle timeout lives on; the quiet one is closed
      await()
          .during(idle.multipliedBy(3))
          .atMost(idle.multipliedBy(10))
          .pollInterval(idle.dividedBy(4))
          .until(() -> !used.callTool("get_health", Map.of()).get("isError").asBoolean());
      await()
          .atMost(Duration.ofSeconds(10))
          .untilAsserted(() -> assertThat(gauge(fleet, "pallas_mcp_sessions")).isEqualTo(2));
      assertThat(gauge(fleet, "pallas_history_sessions")).isZero();

      HttpResponse<String> gone =
          quiet.post("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}");
      assertThat(gone.statusCode()).isEqualTo(404);
      assertThat(JSON.readTree(gone.body()).at("/error/message").asText())
          .contains("no such session");
      assertThat(McpClients.text(McpClients.send(listening, "send_message", "still here")))
          .contains("still here");
      listening.closeGracefully();
    }
  }

  @Test
  void pastTheRequestLimitACallIsRefusedWhileHealthAndReadinessAnswer() throws Exception {
    DefaultAgentParts.Timings slow =
        new DefaultAgentParts.Timings(
            Duration.ofSeconds(60),
            DefaultAgentParts.Timings.DEFAULT.healthInterval(),
            DefaultAgentParts.Timings.DEFAULT.probeTimeout(),
            DefaultAgentParts.Timings.DEFAULT.providerReprobe(),
            DefaultAgentParts.Timings.DEFAULT.peerTimeout(),
            DefaultAgentParts.Timings.DEFAULT.retry());
    try (RunningFleet fleet =
        RunningFleet.start(
            MANIFEST.formatted("slow"),
            o -> o.withLimits(limits(100, Duration.ofMinutes(30), 2, 128L << 20)),
            slow)) {
      for (int i = 0; i < 2; i++) { // two calls that hang for a minute fill the limit
        RawMcp caller = RawMcp.open(fleet.mcpUrl("a"), null);
        CompletableFuture.runAsync(() -> {
          try {
            caller.callTool("send_message", Map.of("message", "hang"));
          } catch (Exception e) {
            // cut when the fleet closes
          }
        });
      }
      RawMcp other = RawMcp.open(fleet.mcpUrl("a"), null);
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() ->
              other.post("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}").statusCode()
                  == 503);

      HttpResponse<String> refused =
          other.post(
              "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":"
                  + "{\"name\":\"send_message\",\"arguments\":{\"message\":\"one more\"}}}");
      assertThat(refused.statusCode()).isEqualTo(503);
      assertThat(refused.headers().firstValue("retry-after")).isPresent();
      JsonNode error = JSON.readTree(refused.body());
      assertThat(error.get("id").asInt()).isEqualTo(2);
      assertThat(error.at("/error/message").asText()).contains("maximum of 2 concurrent requests");

      long start = System.nanoTime();
      assertThat(
              HTTP.send(
                      HttpRequest.newBuilder(URI.create(fleet.baseUrl("a") + "/readyz")).build(),
                      HttpResponse.BodyHandlers.ofString())
                  .statusCode())
          .isEqualTo(200);
      assertThat(RawMcp.text(other.callTool("get_health", Map.of()))).contains("\"status\"");
      assertThat(other.post("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\"}").statusCode())
          .isEqualTo(200);
      assertThat(RawMcp.open(fleet.mcpUrl("a"), null).session()).isNotBlank();
      assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
    }
  }

  @Test
  void bodiesPastTheBytesHeldAreRefusedWhileSmallOnesPass() throws Exception {
    try (RunningFleet fleet =
            RunningFleet.start(
                MANIFEST.formatted("passthrough"),
                o -> o.withLimits(limits(100, Duration.ofMinutes(30), 512, 100L << 20)));
        Socket stalled = new Socket("127.0.0.1", fleet.port("a"))) {
      // 70 MiB announced, 1 byte sent: held from the first byte until the connection goes
      OutputStream out = stalled.getOutputStream();
      out.write(postHead(70 << 20).getBytes(StandardCharsets.US_ASCII));
      out.write('{');
      out.flush();

      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> announce(fleet, 40 << 20).startsWith("HTTP/1.1 503"));
      String refused = announce(fleet, 40 << 20);
      assertThat(refused)
          .startsWith("HTTP/1.1 503")
          .containsIgnoringCase("Retry-After:")
          .contains("\"code\":-32000", "limit of 100 MiB");
      // a chunked body counts as it arrives: refused once it passes the 30 MiB left
      assertThat(RawMcp.chunkedPost(fleet.port("a"), 40))
          .startsWith("HTTP/1.1 503")
          .contains("limit of 100 MiB");
      RawMcp small = RawMcp.open(fleet.mcpUrl("a"), null);
      assertThat(RawMcp.text(small.callTool("get_health", Map.of()))).contains("\"status\"");

      stalled.close(); // its 70 MiB are released: a 40 MiB body is read and answered
      String padded = "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"}" + " ".repeat(40 << 20);
      await()
          .atMost(Duration.ofSeconds(10))
          .untilAsserted(() -> assertThat(small.post(padded).statusCode()).isEqualTo(200));
    }
  }

  /** The answer to a POST announcing {@code length} bytes, none sent, or "" if it waits. */
  private static String announce(RunningFleet fleet, int length) throws Exception {
    try (Socket socket = new Socket("127.0.0.1", fleet.port("a"))) {
      socket.getOutputStream().write(postHead(length).getBytes(StandardCharsets.US_ASCII));
      socket.setSoTimeout(2000);
      InputStream in = socket.getInputStream();
      try {
        return new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
      } catch (SocketTimeoutException waiting) {
        return ""; // admitted: the server waits for the body
      }
    }
  }

  private static String postHead(int length) {
    return RawMcp.postHead("Content-Length: " + length);
  }

  /**
   * Opens {@code count} connections that send nothing, once none is open, and returns them when the
   * agent counts them all.
   */
  private static List<Socket> openIdle(RunningFleet fleet, int count) throws Exception {
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> gauge(fleet, "pallas_http_connections") == 0);
    List<Socket> idle = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      idle.add(new Socket("127.0.0.1", fleet.port("a")));
    }
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> gauge(fleet, "pallas_http_connections") == count);
    return idle;
  }

  /** A new session, opened over connections closed after each answer; its Mcp-Session-Id. */
  private static String initialize(int port) throws Exception {
    String answer = exchange(port, rawPost(null, INITIALIZE, "Connection: close"));
    Matcher session = Pattern.compile("(?im)^mcp-session-id: (\\S+)").matcher(answer);
    assertThat(session.find()).as(answer).isTrue();
    String initialized = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";
    assertThat(exchange(port, rawPost(session.group(1), initialized, "Connection: close")))
        .startsWith("HTTP/1.1 202");
    return session.group(1);
  }

  /**
   * The raw answer to {@code request} on a new connection, read until the server closes it; fails
   * when the connection is kept open.
   */
  private static String exchange(int port, String request) throws Exception {
    try (Socket socket = new Socket("127.0.0.1", port)) {
      socket.setSoTimeout(10_000);
      socket.getOutputStream().write(request.getBytes(StandardCharsets.UTF_8));
      return new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    } catch (SocketTimeoutException kept) {
      throw new AssertionError(
          "the connection was kept open after: " + request.lines().findFirst());
    }
  }

  /** A raw MCP POST of {@code body}, on {@code session} unless null, with extra header lines. */
  private static String rawPost(String session, String body, String... headers) {
    List<String> lines = new ArrayList<>(List.of(headers));
    if (session != null) {
      lines.add("Mcp-Session-Id: " + session);
    }
    lines.add("Content-Length: " + body.getBytes(StandardCharsets.UTF_8).length);
    return RawMcp.postHead(String.join("\r\n", lines)) + body;
  }

  private static String get(String path) {
    return "GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n";
  }

  private static int status(String url) throws Exception {
    return HTTP.send(
            HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.discarding())
        .statusCode();
  }

  private static HttpResponse<String> post(String url, String body) throws Exception {
    return HTTP.send(
        HttpRequest.newBuilder(URI.create(url))
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private static double gauge(RunningFleet fleet, String name) {
    String text = fleet.metrics().scrape();
    Matcher m = Pattern.compile("(?m)^" + name + "\\{agent=\"a\"} (\\S+)$").matcher(text);
    assertThat(m.find()).as("%s in:%n%s", name, text).isTrue();
    return Double.parseDouble(m.group(1));
  }
}
