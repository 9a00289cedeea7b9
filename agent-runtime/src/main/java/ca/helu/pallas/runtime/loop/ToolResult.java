package ca.helu.pallas.runtime.loop;

/** What a tool call gave back, as text for the model; {@code ok=false} when it failed. */
public record ToolResult(boolean ok, String text) {
  public static ToolResult ok(String text) {
    return new ToolResult(true, text);
  }

  public static ToolResult failed(String message) {
    return new ToolResult(false, message);
  }
}
