package ca.helu.pallas.runtime.downstream;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The bearer rides a downstream request only when its parsed method is tools/call. */
class ToolCallDetectionTest {
  @Test
  void theMethodIsParsedNotSearched() {
    assertThat(
            McpToolServer.isToolCall(
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"x\"}}"))
        .isTrue();
    // "tools/call" as text inside another request is not a tool call
    assertThat(
            McpToolServer.isToolCall(
                "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"prompts/get\","
                    + "\"params\":{\"name\":\"p\",\"arguments\":{\"q\":\"\\\"tools/call\\\"\"}}}"))
        .isFalse();
    assertThat(
            McpToolServer.isToolCall(
                "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}"))
        .isFalse();
    assertThat(McpToolServer.isToolCall("not json \"tools/call\"")).isFalse();
    assertThat(McpToolServer.isToolCall(null)).isFalse();
  }
}
