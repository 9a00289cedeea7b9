package ca.helu.pallas.runtime.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A TCP proxy in front of a real MCP server (a {@link TestMcpServer}) that breaks, at the HTTP and
 * socket level, the tool calls asked to break: a {@code tools/call} whose arguments hold {@code
 * "chaos": "<break>"} (one of {@link Break}, lower case, {@code -} for {@code _}), or every tool
 * call while {@link #breakAll} is set. Everything else is passed on unchanged, one request per
 * connection. It counts what a test needs: tool calls in flight at the server, initializes, and the
 * breaks it answered.
 */
public final class ChaosProxy implements AutoCloseable {
  /** How a tool call is broken. */
  public enum Break {
    /** 200, application/json, a body that is not JSON. */
    GARBAGE_JSON,
    /** 200, application/json, JSON that is no JSON-RPC message. */
    NOT_JSON_RPC,
    /** 200, an SSE stream whose first event is not JSON. */
    GARBAGE_SSE,
    /** 200, an SSE stream: an empty priming event, then one that is not JSON. */
    GARBAGE_SSE_LATE,
    /** 200, application/json, the answer of another call in flight (or of no call). */
    FOREIGN_ID,
    /** The connection is reset (RST) before any answer. */
    RESET,
    /** The connection is closed (FIN) before any answer. */
    CLOSE,
    /** 200, a chunked SSE stream cut (FIN) in the middle of its first event. */
    DROP,
    /** 200, a chunked SSE stream reset (RST) in the middle of its first event. */
    DROP_RESET,
    /** 200, an SSE stream with a priming event only, then a clean end. */
    END_EARLY,
    /** Never answers. */
    HANG,
    /** HTTP 500 with a text body. */
    STATUS_500,
    /** HTTP 400 with a text body, on the session the call first came on (some servers' "gone"). */
    STATUS_400,
    /** HTTP 404 on the session the call first came on, as a server that lost that session. */
    STATUS_404;

    /** Whether this break says the server no longer knows the session (404, or 400). */
    public boolean sessionGone() {
      return this == STATUS_400 || this == STATUS_404;
    }

    public String argument() {
      return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    static Break of(String argument) {
      return valueOf(argument.toUpperCase(Locale.ROOT).replace('-', '_'));
    }
  }

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final byte[] HEAD_END = {'\r', '\n', '\r', '\n'};

  private final ServerSocket listener;
  private final int upstreamPort;
  private final Set<Socket> open = ConcurrentHashMap.newKeySet();
  private final Map<String, String> toolCallIds = new ConcurrentHashMap<>();
  private final Set<String> sessions = ConcurrentHashMap.newKeySet();
  private final Set<String> forgotten = ConcurrentHashMap.newKeySet();
  // for each call broken with a session-gone status: the session it was refused on
  private final Map<String, String> goneOn = new ConcurrentHashMap<>();
  private final AtomicInteger toolCallsInFlight = new AtomicInteger();
  private final AtomicInteger maxToolCallsInFlight = new AtomicInteger();
  private final AtomicInteger initializes = new AtomicInteger();
  private final AtomicInteger broken = new AtomicInteger();
  private final AtomicInteger held = new AtomicInteger();
  private final AtomicReference<Break> breakAll = new AtomicReference<>();
  private volatile CountDownLatch hold = new CountDownLatch(0);
  private volatile CountDownLatch answers = new CountDownLatch(0);
  private volatile boolean forgetEach;

  private ChaosProxy(int upstreamPort) throws IOException {
    this.upstreamPort = upstreamPort;
    listener = new ServerSocket();
    listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 1000);
    Thread.ofVirtual().name("chaos-accept").start(this::accept);
  }

  /** A proxy for the server listening on 127.0.0.1:{@code upstreamPort}. */
  public static ChaosProxy to(int upstreamPort) throws IOException {
    return new ChaosProxy(upstreamPort);
  }

  public String url() {
    return "http://127.0.0.1:" + listener.getLocalPort() + "/mcp";
  }

  /** Breaks every tool call this way from now on (null: only those asking for it). */
  public void breakAll(Break how) {
    breakAll.set(how);
  }

  /** Breaks arriving from now on wait for {@link #releaseBreaks()} before they are answered. */
  public void holdBreaks() {
    hold = new CountDownLatch(1);
  }

  public void releaseBreaks() {
    hold.countDown();
  }

  /**
   * Answers to tool calls passed on from now on wait, complete, for {@link #releaseAnswers()}: the
   * calls stay in flight (without holding the server, whose SDK runs 20 tools at once on 2 cores).
   */
  public void holdAnswers() {
    answers = new CountDownLatch(1);
  }

  public void releaseAnswers() {
    answers.countDown();
  }

  /** Breaks waiting for {@link #releaseBreaks()}. */
  public int heldBreaks() {
    return held.get();
  }

  /**
   * Answers 404 to every request on the sessions opened so far, from now on, as a server that lost
   * them; requests already passed on finish normally.
   */
  public void forgetSessions() {
    forgotten.addAll(sessions);
  }

  /** From now on, forgets each session as soon as it is opened: every call on it gets 404. */
  public void forgetEverySession() {
    forgetEach = true;
    forgetSessions();
  }

  public int toolCallsInFlight() {
    return toolCallsInFlight.get();
  }

  public int maxToolCallsInFlight() {
    return maxToolCallsInFlight.get();
  }

  public int initializes() {
    return initializes.get();
  }

  /** Tool calls answered with a break (404s to forgotten sessions included). */
  public int broken() {
    return broken.get();
  }

  private void accept() {
    while (!listener.isClosed()) {
      try {
        Socket client = listener.accept();
        open.add(client);
        Thread.ofVirtual().name("chaos-connection").start(() -> serve(client));
      } catch (IOException e) {
        return;
      }
    }
  }

  private void serve(Socket client) {
    try (client) {
      InputStream in = client.getInputStream();
      byte[] head = readHead(in);
      if (head == null) {
        return;
      }
      Map<String, String> headers = new LinkedHashMap<>();
      String[] lines = new String(head, StandardCharsets.ISO_8859_1).split("\r\n");
      for (int i = 1; i < lines.length; i++) {
        int colon = lines[i].indexOf(':');
        if (colon > 0) {
          headers.put(
              lines[i].substring(0, colon).strip().toLowerCase(Locale.ROOT),
              lines[i].substring(colon + 1).strip());
        }
      }
      int length = Integer.parseInt(headers.getOrDefault("content-length", "0"));
      byte[] body = in.readNBytes(length);
      String session = headers.get("mcp-session-id");
      JsonNode message = parse(body);
      boolean toolCall = "tools/call".equals(message.path("method").asText());
      if (session != null && forgotten.contains(session)) {
        if (toolCall) {
          broken.incrementAndGet();
        }
        respond(client, 404, "text/plain", "Session not found");
        return;
      }
      Break how = toolCall ? breakOf(message) : null;
      if (how != null && how.sessionGone() && !refusedOn(session, message)) {
        how = null; // sent again on another session: the server lost only the first
      }
      if (how != null) {
        broken.incrementAndGet();
        held.incrementAndGet();
        try {
          hold.await();
        } finally {
          held.decrementAndGet();
        }
        breakIt(client, how, message);
        return;
      }
      if ("initialize".equals(message.path("method").asText())) {
        initializes.incrementAndGet();
      }
      if (toolCall) {
        toolCallIds.put(message.path("id").asText(), message.path("id").toString());
        maxToolCallsInFlight.accumulateAndGet(toolCallsInFlight.incrementAndGet(), Math::max);
      }
      try {
        forward(client, lines, headers, body, toolCall ? answers : null);
      } finally {
        if (toolCall) {
          toolCallsInFlight.decrementAndGet();
          toolCallIds.remove(message.path("id").asText());
        }
      }
    } catch (IOException | InterruptedException e) {
      // the client or the test went away
    } finally {
      open.remove(client);
    }
  }

  /**
   * Whether a call asked to break with a "session gone" status is refused on {@code session}: on
   * the session it first came on, as a server that lost that session; on any other it passes.
   */
  private boolean refusedOn(String session, JsonNode message) {
    String call = message.path("params").path("arguments").toString();
    return Objects.equals(goneOn.computeIfAbsent(call, k -> String.valueOf(session)), session);
  }

  private Break breakOf(JsonNode message) {
    JsonNode chaos = message.path("params").path("arguments").path("chaos");
    return chaos.isTextual() ? Break.of(chaos.asText()) : breakAll.get();
  }

  private static JsonNode parse(byte[] body) {
    try {
      return body.length == 0 ? JSON.createObjectNode() : JSON.readTree(body);
    } catch (IOException e) {
      return JSON.createObjectNode();
    }
  }

  /**
   * Passes the request on with {@code Connection: close}, and the answer back as it streams, or
   * whole once {@code held} opens.
   */
  private void forward(
      Socket client, String[] lines, Map<String, String> headers, byte[] body, CountDownLatch held)
      throws IOException, InterruptedException {
    try (Socket upstream = new Socket(InetAddress.getLoopbackAddress(), upstreamPort)) {
      open.add(upstream);
      StringBuilder request = new StringBuilder(lines[0]).append("\r\n");
      headers.forEach((name, value) -> {
        if (!name.equals("connection")) {
          request.append(name).append(": ").append(value).append("\r\n");
        }
      });
      request.append("connection: close\r\n\r\n");
      OutputStream toUpstream = upstream.getOutputStream();
      toUpstream.write(request.toString().getBytes(StandardCharsets.ISO_8859_1));
      toUpstream.write(body);
      toUpstream.flush();
      InputStream fromUpstream = upstream.getInputStream();
      byte[] head = readHead(fromUpstream);
      if (head == null) {
        return;
      }
      StringBuilder answer = new StringBuilder();
      for (String line : new String(head, StandardCharsets.ISO_8859_1).split("\r\n")) {
        String lower = line.toLowerCase(Locale.ROOT);
        if (lower.startsWith("mcp-session-id:")) {
          String id = line.substring(line.indexOf(':') + 1).strip();
          sessions.add(id);
          if (forgetEach) {
            forgotten.add(id);
          }
        }
        if (!lower.startsWith("connection:")) {
          answer.append(line).append("\r\n");
        }
      }
      answer.append("Connection: close\r\n\r\n");
      if (held != null && held.getCount() > 0) {
        byte[] rest = fromUpstream.readAllBytes();
        held.await();
        OutputStream toClient = client.getOutputStream();
        toClient.write(answer.toString().getBytes(StandardCharsets.ISO_8859_1));
        toClient.write(rest);
        toClient.flush();
        return;
      }
      OutputStream toClient = client.getOutputStream();
      toClient.write(answer.toString().getBytes(StandardCharsets.ISO_8859_1));
      toClient.flush();
      byte[] buffer = new byte[8192];
      for (int n = fromUpstream.read(buffer); n >= 0; n = fromUpstream.read(buffer)) {
        toClient.write(buffer, 0, n);
        toClient.flush();
      }
    } finally {
      open.removeIf(Socket::isClosed);
    }
  }

  private void breakIt(Socket client, Break how, JsonNode message) throws IOException {
    switch (how) {
      case GARBAGE_JSON -> respond(client, 200, "application/json", "<html>this is not json");
      case NOT_JSON_RPC -> respond(client, 200, "application/json", "{\"hello\":\"world\"}");
      case GARBAGE_SSE ->
          respond(client, 200, "text/event-stream", "event: message\ndata: {not json\n\n");
      case GARBAGE_SSE_LATE ->
          respond(client, 200, "text/event-stream", "id: 1\ndata: \n\ndata: {not json\n\n");
      case FOREIGN_ID -> {
        String own = message.path("id").asText();
        String other =
            toolCallIds.entrySet().stream()
                .filter(e -> !e.getKey().equals(own))
                .map(Map.Entry::getValue)
                .findFirst()
                .orElse("\"no-such-call\"");
        respond(
            client,
            200,
            "application/json",
            "{\"jsonrpc\":\"2.0\",\"id\":"
                + other
                + ",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"stolen\"}]}}");
      }
      case RESET -> reset(client);
      case CLOSE -> client.shutdownOutput();
      case DROP, DROP_RESET -> {
        OutputStream out = client.getOutputStream();
        String half = "data: {\"jsonrpc\":\"2.0\",\"id\":";
        out.write(
            ("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                    + "Transfer-Encoding: chunked\r\n\r\n"
                    + Integer.toHexString(half.length() + 20)
                    + "\r\n"
                    + half)
                .getBytes(StandardCharsets.US_ASCII));
        out.flush();
        if (how == Break.DROP_RESET) {
          reset(client);
        } else {
          client.shutdownOutput();
        }
      }
      case END_EARLY -> respond(client, 200, "text/event-stream", "id: 1\ndata: \n\n");
      case HANG -> {
        // until the client gives up (closes) or the proxy closes
        while (client.getInputStream().read() >= 0) {
          // nothing comes
        }
      }
      case STATUS_500 -> respond(client, 500, "text/plain", "Internal Server Error");
      case STATUS_400 -> respond(client, 400, "text/plain", "Bad Request");
      case STATUS_404 -> respond(client, 404, "text/plain", "Session not found");
    }
  }

  private static void reset(Socket client) throws IOException {
    client.setSoLinger(true, 0);
    client.close();
  }

  private static void respond(Socket client, int status, String type, String body)
      throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    OutputStream out = client.getOutputStream();
    out.write(
        ("HTTP/1.1 "
                + status
                + " X\r\nContent-Type: "
                + type
                + "\r\nContent-Length: "
                + bytes.length
                + "\r\nConnection: close\r\n\r\n")
            .getBytes(StandardCharsets.US_ASCII));
    out.write(bytes);
    out.flush();
  }

  /** The bytes up to the blank line ending an HTTP head, or null at end of stream. */
  private static byte[] readHead(InputStream in) throws IOException {
    ByteArrayOutputStream head = new ByteArrayOutputStream();
    int matched = 0;
    while (matched < HEAD_END.length) {
      int b = in.read();
      if (b < 0) {
        return null;
      }
      head.write(b);
      matched = b == HEAD_END[matched] ? matched + 1 : (b == HEAD_END[0] ? 1 : 0);
    }
    byte[] bytes = head.toByteArray();
    return java.util.Arrays.copyOf(bytes, bytes.length - HEAD_END.length);
  }

  @Override
  public void close() throws IOException {
    releaseBreaks();
    releaseAnswers();
    listener.close();
    for (Socket s : List.copyOf(open)) {
      s.close();
    }
  }
}
