package ca.helu.pallas.runtime.it;

import static org.assertj.core.api.Assertions.assertThat;

import ca.helu.pallas.runtime.auth.StaticTokenFiles;
import ca.helu.pallas.runtime.testing.RawMcp;
import ca.helu.pallas.runtime.testing.RunningFleet;
import com.fasterxml.jackson.databind.JsonNode;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Per-caller limits (issue 18 §2; docs/runtime.md, "Per-caller limits") on a fleet whose callers
 * authenticate with static tokens: a caller past its calls per minute is refused with JSON-RPC
 * error -32002 naming the limit and when to retry, another caller is not, the agent's own limit
 * overrides the fleet's, and the refusals are counted by agent and limit, never by caller.
 */
class CallerLimitsIT {
  private static final String MANIFEST =
      """
      apiVersion: pallas.helu.ca/v1alpha1
      kind: PallasDeployment
      metadata: {name: limited}
      spec:
        host: 127.0.0.1
        registry: {port: ${port:registry}}
        defaultModel: passthrough
        callerLimits: {callsPerMinute: 2}
        agents:
          - {name: a, port: ${port:a}, instanceScope: request}
          - {name: b, port: ${port:b}, instanceScope: request, callerLimits: {callsPerMinute: 100}}
        auth:
          staticTokens: {secretName: agent-tokens}
      """;

  @TempDir Path tokens;

  @Test
  void aCallerPastItsCallsPerMinuteIsRefusedWithTheLimitAndOthersAreNot() throws Exception {
    Files.writeString(tokens.resolve("alice"), "tok-alice-1");
    Files.writeString(tokens.resolve("bob"), "tok-bob-2");
    try (RunningFleet fleet =
        RunningFleet.start(MANIFEST, o -> o.withStaticTokens(StaticTokenFiles.read(tokens)))) {
      RawMcp alice = RawMcp.open(fleet.mcpUrl("a"), "tok-alice-1");
      for (int i = 0; i < 2; i++) {
        assertThat(RawMcp.text(alice.callTool("send_message", Map.of("message", "hi " + i))))
            .isEqualTo("hi " + i);
      }
      HttpResponse<String> refused =
          alice.post(RawMcp.toolCall(9, "send_message", Map.of("message", "one too many")));
      JsonNode error = RawMcp.answer(refused.body(), 9).path("error");
      assertThat(error.path("code").asInt()).isEqualTo(-32002);
      assertThat(error.path("message").asText())
          .startsWith(
              "Too Many Requests: caller 'alice' has made its 2 calls per minute to agent 'a'"
                  + " (callsPerMinute); retry in ");
      assertThat(error.path("data").path("limit").asText()).isEqualTo("callsPerMinute");
      assertThat(error.path("data").path("retryAfterSeconds").asLong()).isBetween(1L, 30L);

      // bob has his own count; agent b its own limit
      RawMcp bob = RawMcp.open(fleet.mcpUrl("a"), "tok-bob-2");
      assertThat(RawMcp.text(bob.callTool("send_message", Map.of("message", "bob"))))
          .isEqualTo("bob");
      RawMcp aliceOnB = RawMcp.open(fleet.mcpUrl("b"), "tok-alice-1");
      for (int i = 0; i < 5; i++) {
        assertThat(RawMcp.text(aliceOnB.callTool("send_message", Map.of("message", "b" + i))))
            .isEqualTo("b" + i);
      }

      assertThat(fleet.metrics().scrape())
          .contains("pallas_caller_limit_refusals_total{agent=\"a\",limit=\"callsPerMinute\"} 1.0")
          .doesNotContain("alice");
    }
  }
}
