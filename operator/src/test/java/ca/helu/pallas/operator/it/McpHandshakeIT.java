package ca.helu.pallas.operator.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ca.helu.pallas.operator.status.Reason;
import ca.helu.pallas.operator.status.Verification;
import ca.helu.pallas.operator.testing.LocalPod;
import ca.helu.pallas.operator.verify.McpHandshake;
import ca.helu.pallas.runtime.http.HttpHost;
import ca.helu.pallas.runtime.testing.TestMcpServer;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * The operator's handshake against real MCP servers on free ports (the SDK's server, and servers
 * that hang or answer garbage): what it records when one answers, and the words of each failure,
 * which name no library class and quote nothing the server sent.
 */
class McpHandshakeIT {
  private static final McpHandshake HANDSHAKE = new McpHandshake();

  @AfterAll
  static void close() {
    HANDSHAKE.close();
  }

  @Test
  void anAnsweringServerGivesItsInfoProtocolAndToolsAndItsSessionIsClosed() {
    try (TestMcpServer server = TestMcpServer.start()) {
      Verification v = HANDSHAKE.run(URI.create(server.url()));
      assertThat(v.status()).isEqualTo("True");
      assertThat(v.reason()).isEqualTo(Reason.HandshakeSucceeded);
      assertThat(v.serverName()).isEqualTo("test-mcp");
      assertThat(v.serverVersion()).isEqualTo("1.0.0");
      assertThat(v.protocolVersion()).matches("\\d{4}-\\d{2}-\\d{2}");
      assertThat(v.tools()).containsExactly("echo", "whoami", "sleep", "rendezvous", "fail");
      assertThat(v.message()).contains("5 tools");
      // no session stays behind on the agent
      await().atMost(Duration.ofSeconds(5)).until(() -> server.deletes() == 1);
    }
  }

  @Test
  void aRefusedConnectionIsNamed() throws Exception {
    int port = LocalPod.freePorts(1)[0];
    Verification v = HANDSHAKE.run(URI.create("http://127.0.0.1:" + port + "/mcp"));
    assertThat(v.status()).isEqualTo("False");
    assertThat(v.reason()).isEqualTo(Reason.InitializeFailed);
    assertThat(v.message()).isEqualTo("initialize: unreachable (connection refused)");
  }

  @Test
  void aServiceNameThatDoesNotResolveIsNamed() {
    Verification v = HANDSHAKE.run(URI.create("http://nowhere-a.nowhere.svc:8080/mcp"));
    assertThat(v.reason()).isEqualTo(Reason.InitializeFailed);
    assertThat(v.message())
        .isEqualTo("initialize: unreachable (its Service name does not resolve)");
  }

  @Test
  void aServerThatNeverAnswersTimesOut() {
    try (TestMcpServer server = TestMcpServer.start(TestMcpServer.Mode.HANG)) {
      long start = System.nanoTime();
      Verification v = HANDSHAKE.run(URI.create(server.url()));
      assertThat(v.reason()).isEqualTo(Reason.InitializeFailed);
      assertThat(v.message()).isEqualTo("initialize: no answer within 3s");
      assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(15));
    }
  }

  @Test
  void garbageIsNotQuoted() {
    try (TestMcpServer server = TestMcpServer.start(TestMcpServer.Mode.GARBAGE)) {
      Verification v = HANDSHAKE.run(URI.create(server.url()));
      assertThat(v.reason()).isEqualTo(Reason.InitializeFailed);
      assertThat(v.message())
          .startsWith("initialize: ")
          .doesNotContain("not json")
          .doesNotContainPattern("[a-z]+\\.[a-z]+\\.[A-Z]\\w*(Exception|Error)");
    }
  }

  /** An agent that requires credentials refuses the handshake, which sends none: said so. */
  @Test
  void anAgentThatRequiresCredentialsIsNamedAsRefusing() {
    HttpHost host =
        HttpHost.builder("127.0.0.1", 0)
            .exact(
                "/mcp",
                exchange ->
                    HttpHost.send(
                        exchange,
                        401,
                        "application/json",
                        "{\"error\":\"unauthorized\"}".getBytes(StandardCharsets.UTF_8)))
            .build()
            .start();
    try {
      Verification v = HANDSHAKE.run(URI.create("http://127.0.0.1:" + host.port() + "/mcp"));
      assertThat(v.reason()).isEqualTo(Reason.InitializeFailed);
      assertThat(v.message())
          .isEqualTo("initialize: refused the operator's unauthenticated request (HTTP 401)");
    } finally {
      host.close();
    }
  }
}
