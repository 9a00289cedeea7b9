package ca.helu.pallas.runtime.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class McpEnvelopeTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void onlyAnAgentsHealthToolsAndServersResourcesAreOpen() {
    assertThat(read("resources/read", "pallas://agents/a/health").isOpenResource()).isTrue();
    assertThat(read("resources/subscribe", "pallas://agents/b_2/health").isOpenResource()).isTrue();
    assertThat(read("resources/unsubscribe", "pallas://agents/a/health").isOpenResource()).isTrue();
    assertThat(read("resources/read", "pallas://agents/a/history").isOpenResource()).isFalse();
    assertThat(read("resources/read", "pallas://agents/a/b/health").isOpenResource()).isFalse();
    assertThat(read("resources/read", "pallas://agents//health").isOpenResource()).isFalse();
    assertThat(read("resources/read", "file:///pallas://agents/a/health").isOpenResource())
        .isFalse();
    assertThat(read("prompts/get", "pallas://agents/a/health").isOpenResource()).isFalse();
    assertThat(read("resources/read", "pallas://agents/a/tools").isOpenResource()).isTrue();
    assertThat(read("resources/subscribe", "pallas://agents/a/servers").isOpenResource()).isTrue();
    assertThat(read("resources/read", "pallas://agents/a/tools/x").isOpenResource()).isFalse();
    assertThat(read("resources/read", "pallas://agents/a/toolsx").isOpenResource()).isFalse();
  }

  private static McpEnvelope read(String method, String uri) {
    byte[] body =
        ("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\""
                + method
                + "\",\"params\":{\"uri\":\""
                + uri
                + "\",\"name\":\"x\"}}")
            .getBytes(StandardCharsets.UTF_8);
    McpEnvelope envelope = McpEnvelope.read(JSON, body, body.length);
    assertThat(envelope.problem()).isNull();
    return envelope;
  }
}
