package ca.helu.pallas.runtime.it;

import static org.assertj.core.api.Assertions.assertThat;

import ca.helu.pallas.runtime.auth.StaticTokenFiles;
import ca.helu.pallas.runtime.serve.DefaultAgentParts;
import ca.helu.pallas.runtime.testing.FakeLlmServer;
import ca.helu.pallas.runtime.testing.LogCapture;
import ca.helu.pallas.runtime.testing.McpClients;
import ca.helu.pallas.runtime.testing.RunningFleet;
import ca.helu.pallas.runtime.testing.TestMcpServer;
import ch.qos.logback.classic.spi.ILoggingEvent;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelcontextprotocol.client.McpSyncClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The caller on every line of a call (issue 18 §2): also on the lines its parallel tool calls log
 * from their own threads, and in its audit line with the LLM tokens the provider reported.
 */
class CallerContextIT {
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path tokens;

  @Test
  void theCallersLinesCarryItThroughParallelToolCallsAndItsAuditCountsTheProvidersTokens()
      throws Exception {
    Files.writeString(tokens.resolve("daedalus"), "daedalus-token-0123456789abcdef");
    try (FakeLlmServer openai = FakeLlmServer.openAi("qwen3-8b");
        TestMcpServer tools = TestMcpServer.start();
        RunningFleet fleet =
            RunningFleet.start(
                """
                apiVersion: pallas.helu.ca/v1alpha1
                kind: PallasDeployment
                metadata: {name: context}
                spec:
                  host: 127.0.0.1
                  registry: {port: ${port:registry}}
                  providers:
                    openai: {baseUrl: "%s", apiKey: {env: TEST_OPENAI_KEY}}
                  mcpServers: [{name: tools, url: "%s"}]
                  agents:
                    - {name: t, port: ${port:t}, model: openai.qwen3-8b, servers: [tools]}
                  auth: {staticTokens: {secretName: tokens}}
                """
                    .formatted(openai.baseUrl(), tools.url()),
                Map.of("TEST_OPENAI_KEY", "sk-test"),
                o -> o.withStaticTokens(StaticTokenFiles.read(tokens)),
                DefaultAgentParts.Timings.DEFAULT);
        LogCapture log = new LogCapture()) {
      FakeLlmServer.Reply calls =
          openai.toolCalls(
              List.of(
                  new String[] {"call_a", "tools__fail", "{}"},
                  new String[] {"call_b", "tools__fail", "{}"}));
      FakeLlmServer.Reply answer = openai.text("both failed", 7, 3);
      openai.then(calls, answer);
      try (McpSyncClient client =
          McpClients.connect(fleet.mcpUrl("t"), "daedalus-token-0123456789abcdef", n -> {})) {
        assertThat(McpClients.text(McpClients.send(client, "send_message", "go")))
            .isEqualTo("both failed");
      }
      List<ILoggingEvent> toolLines =
          log.events().stream()
              .filter(e -> e.getFormattedMessage().startsWith("tool tools/fail failed"))
              .toList();
      assertThat(toolLines).hasSize(2);
      assertThat(toolLines)
          .allSatisfy(e -> {
            assertThat(e.getMDCPropertyMap())
                .containsEntry("caller", "daedalus")
                .containsEntry("agent", "t");
          });
      String audit =
          log.events().stream()
              .filter(e -> e.getLoggerName().equals("pallas.audit"))
              .map(ILoggingEvent::getFormattedMessage)
              .findFirst()
              .orElseThrow();
      assertThat(audit)
          .startsWith("call caller=daedalus client=- agent=t tool=send_message outcome=ok")
          .endsWith(
              "llm_input_tokens="
                  + (usage(calls, "prompt_tokens") + usage(answer, "prompt_tokens"))
                  + " llm_output_tokens="
                  + (usage(calls, "completion_tokens") + usage(answer, "completion_tokens"))
                  + " via=-");
    }
  }

  /** The usage the provider reported in one answer, as the OpenAI wire format says it. */
  private static long usage(FakeLlmServer.Reply reply, String field) throws Exception {
    return JSON.readTree(reply.body()).path("usage").path(field).asLong();
  }
}
