package ca.helu.pallas.runtime.mcp;

import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** The validated arguments of send_message: a message and optional base64 images. */
record SendMessageArgs(String message, List<Image> images) {
  static final Set<String> IMAGE_TYPES =
      Set.of("image/png", "image/jpeg", "image/gif", "image/webp");
  static final int MAX_IMAGES = 10;
  static final int MAX_IMAGE_BYTES = 5 * 1024 * 1024;

  /** The longest message, whatever the model; a smaller context window lowers it. */
  static final int MAX_MESSAGE_CHARS = 8 * 1024 * 1024;

  /** One image: base64 data as sent, and its mime type. */
  record Image(String base64, String mimeType) {}

  /** Thrown with a message the caller can act on; it names the argument at fault. */
  static final class InvalidArguments extends Exception {
    InvalidArguments(String message) {
      super(message);
    }
  }

  static SendMessageArgs parse(Map<String, Object> arguments, boolean vision, String agent)
      throws InvalidArguments {
    return parse(arguments, vision, agent, MAX_MESSAGE_CHARS);
  }

  /**
   * @param maxMessageChars the longest message: what the agent's model can read
   *     (modelCapabilities.contextWindow x 4 characters), at most {@link #MAX_MESSAGE_CHARS}
   */
  static SendMessageArgs parse(
      Map<String, Object> arguments, boolean vision, String agent, int maxMessageChars)
      throws InvalidArguments {
    Map<String, Object> args = arguments == null ? Map.of() : arguments;
    for (String key : args.keySet()) {
      if (!key.equals("message") && !key.equals("images")) {
        throw new InvalidArguments(
            "unknown argument '" + key + "': send_message takes message and images");
      }
    }
    Object message = args.get("message");
    if (message == null) {
      throw new InvalidArguments("argument 'message' is required");
    }
    if (!(message instanceof String text)) {
      throw new InvalidArguments("argument 'message' must be a string");
    }
    if (text.isBlank()) {
      throw new InvalidArguments("argument 'message' must not be empty");
    }
    if (text.length() > maxMessageChars) {
      throw new InvalidArguments(
          "argument 'message' has "
              + text.length()
              + " characters; at most "
              + maxMessageChars
              + " fit (modelCapabilities.contextWindow x 4, at most "
              + MAX_MESSAGE_CHARS
              + ")");
    }
    Object rawImages = args.get("images");
    if (rawImages == null) {
      return new SendMessageArgs(text, List.of());
    }
    if (!(rawImages instanceof List<?> list)) {
      throw new InvalidArguments("argument 'images' must be a list of {data, mime_type}");
    }
    if (!list.isEmpty() && !vision) {
      throw new InvalidArguments(
          "agent '"
              + agent
              + "' does not accept images: its model is not vision-capable"
              + " (modelCapabilities.vision is false)");
    }
    if (list.size() > MAX_IMAGES) {
      throw new InvalidArguments(
          "at most " + MAX_IMAGES + " images per message, got " + list.size());
    }
    List<Image> images = new ArrayList<>();
    for (int i = 0; i < list.size(); i++) {
      images.add(image(list.get(i), "images[" + i + "]"));
    }
    return new SendMessageArgs(text, List.copyOf(images));
  }

  private static Image image(Object raw, String at) throws InvalidArguments {
    if (!(raw instanceof Map<?, ?> map)) {
      throw new InvalidArguments(at + " must be an object {data, mime_type}");
    }
    if (!(map.get("data") instanceof String data) || data.isEmpty()) {
      throw new InvalidArguments(at + ".data must be a non-empty base64 string");
    }
    if (!(map.get("mime_type") instanceof String mime)) {
      throw new InvalidArguments(at + ".mime_type must be a string such as image/png");
    }
    if (!IMAGE_TYPES.contains(mime)) {
      throw new InvalidArguments(
          at
              + ".mime_type '"
              + mime
              + "' is not supported (use image/png, image/jpeg, image/gif or image/webp)");
    }
    // base64 length bounds the decoded size: check before decoding anything large
    if ((long) data.length() * 3 / 4 > MAX_IMAGE_BYTES + 3) {
      throw new InvalidArguments(at + " is larger than " + MAX_IMAGE_BYTES + " bytes");
    }
    byte[] bytes;
    try {
      bytes = Base64.getDecoder().decode(data);
    } catch (IllegalArgumentException e) {
      throw new InvalidArguments(at + ".data is not valid base64");
    }
    if (bytes.length > MAX_IMAGE_BYTES) {
      throw new InvalidArguments(at + " is larger than " + MAX_IMAGE_BYTES + " bytes");
    }
    return new Image(data, mime);
  }
}
