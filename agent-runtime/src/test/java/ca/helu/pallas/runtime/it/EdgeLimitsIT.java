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
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The bounds of one agent's MCP endpoint (issue 8 §3, §4; docs/runtime.md, "Limits"): a session
 * past the cap is refused, an idle session is closed and then answered 404, a request past the
 * concurrency limit and a body past the bytes held are refused with 503 and Retry-After, while
 * /readyz and get_health keep answering.
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

  private static EdgeLimits limits(int sessions, Duration idle, int requests, long bodyBytesHeld) {
    return new EdgeLimits(sessions, idle, requests, bodyBytesHeld);
  }

  @Test
  void aSessionPastTheCapIsRefusedUntilOneEnds() throws Exception {
    EdgeLimits three = limits(3, Duration.ofMinutes(30), 512, 128L << 20);
    try (RunningFleet fleet =
        RunningFleet.start(MANIFEST.formatted("passthrough"), o -> o.withLimits(three))) {
      List<McpSyncClient> clients = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        clients.add(McpClients.connect(fleet.mcpUrl("a")));
      }
      HttpResponse<String> refused = post(fleet.mcpUrl("a"), INITIALIZE);
      assertThat(refused.statusCode()).isEqualTo(503);
      assertThat(refused.headers().firstValue("retry-after")).isPresent();
      JsonNode error = JSON.readTree(refused.body());
      assertThat(error.get("id").asInt()).isZero();
      assertThat(error.at("/error/message").asText()).contains("maximum of 3 sessions");
      assertThatThrownBy(() -> McpClients.connect(fleet.mcpUrl("a")))
          .hasStackTraceContaining("503");
      assertThat(gauge(fleet, "pallas_mcp_sessions")).isEqualTo(3);

      clients.remove(0).closeGracefully(); // DELETE: room for one more
      await()
          .atMost(Duration.ofSeconds(10))
          .untilAsserted(() -> assertThat(gauge(fleet, "pallas_mcp_sessions")).isEqualTo(2));
      clients.add(McpClients.connect(fleet.mcpUrl("a")));
      assertThat(McpClients.send(clients.get(2), "send_message", "in").isError()).isFalse();
      clients.forEach(McpSyncClient::closeGracefully);
    }
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
