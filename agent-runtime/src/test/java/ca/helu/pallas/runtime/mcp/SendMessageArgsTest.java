package ca.helu.pallas.runtime.mcp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SendMessageArgsTest {
  private static final String PNG = Base64.getEncoder().encodeToString(new byte[] {1, 2, 3});

  private static String reject(Map<String, Object> args, boolean vision) {
    return assertThatThrownBy(() -> SendMessageArgs.parse(args, vision, "a"))
        .isInstanceOf(SendMessageArgs.InvalidArguments.class)
        .actual()
        .getMessage();
  }

  @Test
  void acceptsTextAndImages() throws Exception {
    SendMessageArgs args =
        SendMessageArgs.parse(
            Map.of(
                "message", "hi", "images", List.of(Map.of("data", PNG, "mime_type", "image/png"))),
            true,
            "a");
    assertThat(args.message()).isEqualTo("hi");
    assertThat(args.images()).containsExactly(new SendMessageArgs.Image(PNG, "image/png"));
  }

  @Test
  void rejectsEachBadInputWithAClearReason() {
    assertThat(reject(Map.of(), false)).isEqualTo("argument 'message' is required");
    assertThat(reject(Map.of("message", 42), false))
        .isEqualTo("argument 'message' must be a string");
    assertThat(reject(Map.of("message", "  "), false)).contains("must not be empty");
    assertThat(reject(Map.of("message", "x", "extra", 1), false))
        .contains("unknown argument 'extra'");
    assertThat(reject(Map.of("message", "x", "images", "nope"), true)).contains("must be a list");
    assertThat(
            reject(
                Map.of(
                    "message",
                    "x",
                    "images",
                    List.of(Map.of("data", PNG, "mime_type", "image/png"))),
                false))
        .contains("not vision-capable");
    assertThat(
            reject(
                Map.of(
                    "message",
                    "x",
                    "images",
                    List.of(Map.of("data", "@@@", "mime_type", "image/png"))),
                true))
        .isEqualTo("images[0].data is not valid base64");
    assertThat(
            reject(
                Map.of(
                    "message",
                    "x",
                    "images",
                    List.of(Map.of("data", PNG, "mime_type", "image/bmp"))),
                true))
        .contains("images[0].mime_type 'image/bmp' is not supported");
    String huge = "A".repeat(SendMessageArgs.MAX_IMAGE_BYTES / 3 * 4 + 8);
    assertThat(
            reject(
                Map.of(
                    "message",
                    "x",
                    "images",
                    List.of(Map.of("data", huge, "mime_type", "image/png"))),
                true))
        .contains("images[0] is larger than");
  }
}
