package ca.helu.pallas.runtime.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * Calls on resumable streams as a client whose connection breaks sees them (MCP 2025-11-25,
 * "Resumability and Redelivery"; docs/contract.md, "Streams"): a send_message call on a raw
 * connection, read event by event and left mid turn, and the GET that resumes it.
 */
public final class ResumableCalls {
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  private ResumableCalls() {}

  /** One SSE event as read: its id, its retry field and its data (null when absent). */
  public record Event(String id, String retry, String data) {}

  /**
   * Sends send_message {@code message} (request id {@code requestId}, progress token "t") on a raw
   * connection, reads its stream until an event whose data contains {@code until}, and closes the
   * connection: the events read, in order.
   */
  public static List<Event> callAndLeave(
      int port, String session, int requestId, String message, String until) throws Exception {
    byte[] body =
        RawMcp.toolCall(requestId, "send_message", Map.of("message", message), "t")
            .getBytes(StandardCharsets.UTF_8);
    try (Socket socket = new Socket("127.0.0.1", port)) {
      socket.setSoTimeout(20_000);
      OutputStream out = socket.getOutputStream();
      out.write(
          RawMcp.postHead(
                  "Mcp-Session-Id: "
                      + session
                      + "\r\nMCP-Protocol-Version: 2025-11-25\r\nContent-Length: "
                      + body.length)
              .getBytes(StandardCharsets.US_ASCII));
      out.write(body);
      out.flush();
      BufferedReader in =
          new BufferedReader(
              new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
      List<Event> events = new ArrayList<>();
      String id = null;
      String retry = null;
      String line;
      while ((line = in.readLine()) != null) {
        if (line.startsWith("id: ")) {
          id = line.substring(4);
        } else if (line.startsWith("retry: ")) {
          retry = line.substring(7);
        } else if (line.startsWith("data:")) {
          String data = line.substring(5).strip();
          events.add(new Event(id, retry, data));
          if (data.contains(until)) {
            return events;
          }
        }
      }
      throw new AssertionError("the stream ended before an event with " + until + ": " + events);
    } // the connection breaks mid turn
  }

  /** Resumes a stream after the event {@code lastId}: the lines of the resumed stream. */
  public static Iterator<String> resume(String url, String session, String lastId)
      throws Exception {
    HttpResponse<java.util.stream.Stream<String>> resumed =
        HTTP.send(
            HttpRequest.newBuilder(URI.create(url))
                .timeout(Duration.ofSeconds(30))
                .header("Accept", "text/event-stream")
                .header("Mcp-Session-Id", session)
                .header("MCP-Protocol-Version", "2025-11-25")
                .header("Last-Event-ID", lastId)
                .GET()
                .build(),
            HttpResponse.BodyHandlers.ofLines());
    assertThat(resumed.statusCode()).isEqualTo(200);
    return resumed.body().iterator();
  }

  /** The number of an event id, {@code <stream>_<n>}. */
  public static long seq(String eventId) {
    return Long.parseLong(eventId.substring(eventId.lastIndexOf('_') + 1));
  }

  /** Whether an event carries a message (not the priming event). */
  public static final Predicate<Event> MESSAGE = e -> e.data() != null && !e.data().isEmpty();
}
