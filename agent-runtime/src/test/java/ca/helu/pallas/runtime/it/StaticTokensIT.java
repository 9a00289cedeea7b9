package ca.helu.pallas.runtime.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ca.helu.pallas.runtime.auth.StaticTokenFiles;
import ca.helu.pallas.runtime.testing.AuthProbe;
import ca.helu.pallas.runtime.testing.LogCapture;
import ca.helu.pallas.runtime.testing.McpClients;
import ca.helu.pallas.runtime.testing.RawMcp;
import ca.helu.pallas.runtime.testing.RunningFleet;
import ch.qos.logback.classic.spi.ILoggingEvent;
import com.fasterxml.jackson.databind.JsonNode;
import io.modelcontextprotocol.client.McpSyncClient;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Static tokens at a served agent's edge (issue 18 §1): the tokens come from a directory, one file
 * per caller as a mounted Secret holds them; a call without a token, with a wrong one or with one
 * only in the query string is refused with 401 and the WWW-Authenticate header that points at the
 * agent's Protected Resource Metadata, while get_health stays open (openHealth, the default). No
 * token is ever logged.
 */
class StaticTokensIT {
  private static final String DAEDALUS = "s3cr3t-daedalus-token-0123456789";
  private static final String ARGOS = "argos-token-abcdefghijklmnop";
  private static final String MANIFEST =
      """
      apiVersion: pallas.helu.ca/v1alpha1
      kind: PallasDeployment
      metadata: {name: tokens}
      spec:
        host: 127.0.0.1
        registry: {port: ${port:registry}}
        defaultModel: passthrough
        agents:
          - {name: a, port: ${port:a}}
          - {name: c, port: ${port:c}, instanceScope: connection}
        auth:
          staticTokens: {secretName: agent-tokens}
          openHealth: OPEN
      """;

  @TempDir static Path tokens;
  private static RunningFleet fleet;
  private static RunningFleet closed;

  @BeforeAll
  static void start() throws Exception {
    Files.writeString(tokens.resolve("daedalus"), DAEDALUS + "\n");
    Files.writeString(tokens.resolve("argos"), ARGOS);
    // a mounted Secret's bookkeeping: skipped
    Files.createDirectories(tokens.resolve("..data"));
    Files.writeString(tokens.resolve(".hidden"), "not-a-token");
    fleet =
        RunningFleet.start(
            MANIFEST.replace("OPEN", "true"),
            o -> o.withStaticTokens(StaticTokenFiles.read(tokens)));
    closed =
        RunningFleet.start(
            MANIFEST.replace("OPEN", "false"),
            o -> o.withStaticTokens(StaticTokenFiles.read(tokens)));
  }

  @AfterAll
  static void stop() {
    fleet.close();
    closed.close();
  }

  @Test
  void theRightTokenCallsTheAgent() {
    try (McpSyncClient client = McpClients.connect(fleet.mcpUrl("a"), DAEDALUS, n -> {})) {
      var result = McpClients.send(client, "send_message", "hello");
      assertThat(result.isError()).isFalse();
      assertThat(McpClients.text(result)).contains("hello");
    }
  }

  @Test
  void aCallWithoutATokenIsAskedForOneNamingTheMetadata() throws Exception {
    HttpResponse<String> refused = AuthProbe.sendMessage(fleet.mcpUrl("a"), null);
    assertThat(refused.statusCode()).isEqualTo(401);
    assertThat(refused.headers().firstValue("WWW-Authenticate"))
        .hasValue("Bearer resource_metadata=\"" + AuthProbe.metadataUrl(fleet.mcpUrl("a")) + "\"");
    JsonNode error = AuthProbe.json(refused);
    assertThat(error.path("id").asInt()).isEqualTo(7);
    assertThat(error.path("error").path("code").asInt()).isEqualTo(-32001);
    assertThat(error.path("error").path("message").asText())
        .startsWith("Unauthorized: a bearer token is required for this tool");
  }

  @Test
  void aWrongTokenAMalformedOneAndOneInTheQueryStringAreRefused() throws Exception {
    try (LogCapture log = new LogCapture()) {
      for (String authorization :
          List.of(
              "Bearer wrong-token-zyxwvutsrqponm",
              "Bearer " + DAEDALUS.substring(0, 20),
              "Bearer " + DAEDALUS + " extra",
              "Basic " + DAEDALUS,
              "Bearer " + "x".repeat(64 * 1024))) {
        HttpResponse<String> refused = AuthProbe.sendMessage(fleet.mcpUrl("a"), authorization);
        assertThat(refused.statusCode()).as(authorization.substring(0, 12)).isEqualTo(401);
        assertThat(refused.headers().firstValue("WWW-Authenticate").orElseThrow())
            .contains("error=\"invalid_token\"");
        assertThat(refused.body()).doesNotContain("Exception", "at ca.", DAEDALUS);
      }
      HttpResponse<String> query =
          AuthProbe.post(
              fleet.mcpUrl("a") + "?access_token=" + DAEDALUS,
              null,
              "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":"
                  + "\"send_message\",\"arguments\":{\"message\":\"hi\"}}}");
      assertThat(query.statusCode()).as("a token in the query string is ignored").isEqualTo(401);
      assertThat(log.lines()).isNotEmpty().noneMatch(l -> l.contains(DAEDALUS.substring(0, 20)));
      assertThat(log.lines()).noneMatch(l -> l.contains("wrong-token"));
    }
  }

  @Test
  void getHealthIsOpenAndNothingElse() throws Exception {
    RawMcp anonymous = RawMcp.open(fleet.mcpUrl("a"), null);
    assertThat(RawMcp.text(anonymous.callTool("get_health", Map.of()))).contains("\"status\"");
    assertThat(anonymous.request("tools/list", Map.of()).path("tools").size()).isEqualTo(3);
    // a client's answer to the server's own request (a keep-alive ping) passes: here one the server
    // does not await, refused as such by the transport, not for want of a token
    HttpResponse<String> answer =
        anonymous.post(
            "{\"jsonrpc\":\"2.0\",\"id\":\"" + anonymous.session() + "-99\",\"result\":{}}");
    assertThat(answer.statusCode()).isEqualTo(400);
    assertThat(answer.body()).contains("awaits no response");
    HttpResponse<String> history =
        anonymous.post(
            "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"prompts/get\",\"params\":{\"name\":"
                + "\"a_history\"}}");
    assertThat(history.statusCode()).isEqualTo(401);
    // the health resource is get_health's answer: open too, and subscribable (issue 20 §2)
    Map<String, Object> health = Map.of("uri", "pallas://agents/a/health");
    assertThat(
            anonymous
                .request("resources/read", health)
                .path("contents")
                .path(0)
                .path("text")
                .asText())
        .startsWith("{\"status\":\"ok\"");
    assertThat(anonymous.request("resources/subscribe", health).isObject()).isTrue();
    assertThat(anonymous.request("resources/list", Map.of()).path("resources").size()).isEqualTo(4);
    // the tools and servers resources the registry indexes are open too (issue 20 §1)
    assertThat(
            anonymous
                .request("resources/read", Map.of("uri", "pallas://agents/a/tools"))
                .path("contents")
                .path(0)
                .path("text")
                .asText())
        .contains("\"send_message\"");
    HttpResponse<String> historyResource =
        anonymous.post(
            "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"resources/read\",\"params\":{\"uri\":"
                + "\"pallas://agents/a/history\"}}");
    assertThat(historyResource.statusCode()).isEqualTo(401);
    assertThat(historyResource.body()).doesNotContain("remembers");
    assertThat(
            anonymous
                .post(
                    "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":"
                        + "\"a\",\"arguments\":{\"message\":\"hi\"}}}")
                .statusCode())
        .isEqualTo(401);
  }

  @Test
  void withoutOpenHealthNothingIsOpen() throws Exception {
    HttpResponse<String> init =
        AuthProbe.post(
            closed.mcpUrl("a"),
            null,
            "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"
                + "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
                + "\"clientInfo\":{\"name\":\"raw\",\"version\":\"1\"}}}");
    assertThat(init.statusCode()).isEqualTo(401);
    assertThat(init.headers().firstValue("WWW-Authenticate").orElseThrow())
        .startsWith("Bearer resource_metadata=");
    assertThat(
            RawMcp.text(RawMcp.open(closed.mcpUrl("a"), DAEDALUS).callTool("get_health", Map.of())))
        .contains("\"status\"");
  }

  @Test
  void theProtectedResourceMetadataNamesTheAgentAndTheHeader() throws Exception {
    for (String url :
        List.of(
            AuthProbe.metadataUrl(fleet.mcpUrl("a")),
            fleet.baseUrl("a") + "/.well-known/oauth-protected-resource")) {
      HttpResponse<String> response = AuthProbe.get(url);
      assertThat(response.statusCode()).isEqualTo(200);
      assertThat(response.headers().firstValue("Content-Type")).hasValue("application/json");
      JsonNode metadata = AuthProbe.json(response);
      assertThat(metadata.path("resource").asText()).isEqualTo(fleet.mcpUrl("a"));
      assertThat(metadata.path("bearer_methods_supported").toString()).isEqualTo("[\"header\"]");
      assertThat(metadata.has("authorization_servers")).isFalse();
    }
    assertThat(AuthProbe.get(fleet.baseUrl("a") + "/livez").statusCode()).isEqualTo(200);
    assertThat(AuthProbe.get(fleet.baseUrl("a") + "/metrics").statusCode()).isEqualTo(200);
  }

  @Test
  void eachCallIsAuditedWithItsCallerAndItsLinesCarryTheCaller() throws Exception {
    try (LogCapture log = new LogCapture()) {
      RawMcp daedalus = RawMcp.open(fleet.mcpUrl("a"), DAEDALUS);
      daedalus.callTool("send_message", Map.of("message", "one two three four"));
      List<ILoggingEvent> audit =
          log.events().stream().filter(e -> e.getLoggerName().equals("pallas.audit")).toList();
      assertThat(audit).hasSize(1);
      String line = audit.get(0).getFormattedMessage();
      assertThat(line)
          .startsWith("call caller=daedalus client=- agent=a tool=send_message outcome=ok")
          .matches(
              ".* duration_ms=\\d+ llm_input_tokens=[1-9]\\d* llm_output_tokens=[1-9]\\d* via=-");
      assertThat(audit.get(0).getMDCPropertyMap()).containsEntry("caller", "daedalus");
      assertThat(log.lines()).noneMatch(l -> l.contains(DAEDALUS));
    }
  }

  @Test
  void aSessionBelongsToTheCallerWhoOpenedIt() throws Exception {
    RawMcp daedalus = RawMcp.open(fleet.mcpUrl("c"), DAEDALUS);
    daedalus.callTool("send_message", Map.of("message", "daedalus's secret plan"));
    for (RawMcp other : List.of(daedalus.as(ARGOS), daedalus.as(null))) {
      HttpResponse<String> refused =
          other.post(
              "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"prompts/get\",\"params\":{\"name\":"
                  + "\"c_history\"}}");
      assertThat(refused.statusCode()).isEqualTo(404);
      assertThat(refused.body()).doesNotContain("secret plan");
      HttpResponse<String> resource =
          other.post(
              "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"resources/read\",\"params\":{\"uri\":"
                  + "\"pallas://agents/c/history\"}}");
      assertThat(resource.statusCode()).as("nor its history resource").isEqualTo(404);
      assertThat(resource.body()).doesNotContain("secret plan");
      assertThat(other.delete()).as("nor may another caller end it").isEqualTo(404);
    }
    assertThat(
            daedalus
                .request("prompts/get", Map.of("name", "c_history"))
                .path("messages")
                .toString())
        .contains("daedalus's secret plan");
  }

  @Test
  void aSessionOpenedWithoutATokenIsTheFirstCallersWhoUsesItWithOne() throws Exception {
    RawMcp anonymous = RawMcp.open(fleet.mcpUrl("c"), null);
    RawMcp argos = anonymous.as(ARGOS);
    argos.callTool("send_message", Map.of("message", "argos was here"));
    assertThat(sendStatus(anonymous.as(DAEDALUS))).isEqualTo(404);
    assertThat(sendStatus(anonymous)).as("nor without a token, once claimed").isEqualTo(404);
    assertThat(argos.request("prompts/get", Map.of("name", "c_history")).toString())
        .contains("argos was here");
  }

  /** The HTTP status of a send_message call on {@code session}. */
  private static int sendStatus(RawMcp session) throws Exception {
    return session
        .post(
            "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{\"name\":"
                + "\"send_message\",\"arguments\":{\"message\":\"hi\"}}}")
        .statusCode();
  }

  @Test
  void aSharedAgentKeepsOneConversationPerCaller() throws Exception {
    RawMcp daedalus = RawMcp.open(fleet.mcpUrl("a"), DAEDALUS);
    RawMcp argos = RawMcp.open(fleet.mcpUrl("a"), ARGOS);
    daedalus.callTool("send_message", Map.of("message", "daedalus remembers alpha"));
    argos.callTool("send_message", Map.of("message", "argos remembers beta"));
    String ofDaedalus =
        RawMcp.open(fleet.mcpUrl("a"), DAEDALUS)
            .request("prompts/get", Map.of("name", "a_history"))
            .toString();
    String ofArgos = argos.request("prompts/get", Map.of("name", "a_history")).toString();
    assertThat(ofDaedalus).contains("daedalus remembers alpha").doesNotContain("beta");
    assertThat(ofArgos).contains("argos remembers beta").doesNotContain("alpha");
    // the history resource shows each caller its own conversation too (issue 20 §2)
    Map<String, Object> history = Map.of("uri", "pallas://agents/a/history");
    assertThat(
            RawMcp.open(fleet.mcpUrl("a"), DAEDALUS).request("resources/read", history).toString())
        .contains("daedalus remembers alpha")
        .doesNotContain("beta");
    assertThat(argos.request("resources/read", history).toString())
        .contains("argos remembers beta")
        .doesNotContain("alpha");
  }

  @Test
  void aManifestAskingForStaticTokensNeedsThem() {
    assertThatThrownBy(() -> RunningFleet.start(MANIFEST.replace("OPEN", "true")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("--static-tokens DIR or set PALLAS_STATIC_TOKENS_DIR")
        .hasMessageContaining("agent-tokens");
  }
}
