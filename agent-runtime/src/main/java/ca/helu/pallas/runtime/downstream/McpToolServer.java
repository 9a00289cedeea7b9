package ca.helu.pallas.runtime.downstream;

import ca.helu.pallas.runtime.Causes;
import ca.helu.pallas.runtime.health.CallHealth;
import ca.helu.pallas.runtime.loop.CallContext;
import ca.helu.pallas.runtime.loop.Progress;
import ca.helu.pallas.runtime.loop.ToolResult;
import ca.helu.pallas.runtime.loop.ToolServer;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpSchema;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A downstream MCP server (or another agent) reached over Streamable HTTP.
 *
 * <p>One caller's failure stays that caller's (docs/runtime.md, "Downstream failures"): calls share
 * one MCP session ({@link SessionKeeper}), and a call that gets garbage, a reset, a dropped stream
 * or a timeout fails alone, its session kept for the others. Only when the server no longer knows
 * the session is it retired: calls in flight finish on it, new calls get the one new session, and a
 * request the server refused for that reason (it did not process it) is sent once more there. Calls
 * in flight at once are bounded ({@code maxConcurrentCalls}); past the bound a call waits, holding
 * nothing, at most its timeout.
 *
 * <p>What a call carries to say who asks ({@link Credentials}: the caller's bearer, a token
 * exchanged for it, the calling agent's identity and its caller) travels in the Reactor context of
 * each call and is read by a request customizer (docs/contract.md, "Bearer forwarding": never a
 * thread-local, never shared mutable headers), so concurrent calls with different callers cannot
 * see each other's token.
 */
public final class McpToolServer implements ToolServer, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(McpToolServer.class);
  private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(5);
  private static final Executor LISTERS =
      task -> Thread.ofVirtual().name("pallas-list-tools").start(task);

  private final String name;
  private final String url;
  private final Map<String, String> headers;
  private final Credentials credentials;
  private final Duration timeout;
  private final Predicate<String> exposed;
  private final int maxConcurrentCalls;
  private final Semaphore slots;
  private HttpClient http;
  private final SessionKeeper sessions;
  private final CallHealth health = new CallHealth();
  private final ConcurrentHashMap<String, Progress> relays = new ConcurrentHashMap<>();
  private final Object listing = new Object();
  private final List<Runnable> toolWatchers = new CopyOnWriteArrayList<>();
  private CompletableFuture<List<McpSchema.Tool>> listingNow;
  private volatile List<McpSchema.Tool> tools;
  // the last list the server gave, kept when a new session's listing fails
  private volatile List<McpSchema.Tool> known;

  /**
   * @param headers resolved static headers (secrets already read)
   * @param credentials what its requests carry to say who asks, beside {@code headers}
   * @param exposed which of the server's tools the model may see
   * @param maxConcurrentCalls tool calls in flight at once, all callers together
   */
  public McpToolServer(
      String name,
      String url,
      Map<String, String> headers,
      Credentials credentials,
      Duration timeout,
      Predicate<String> exposed,
      int maxConcurrentCalls) {
    this.name = name;
    this.url = url;
    this.headers = Map.copyOf(headers);
    this.credentials = credentials;
    this.timeout = timeout;
    this.exposed = exposed;
    this.maxConcurrentCalls = maxConcurrentCalls;
    // fair: calls past the bound get their turn in arrival order
    this.slots = new Semaphore(maxConcurrentCalls, true);
    DownstreamSession.Endpoint endpoint =
        new DownstreamSession.Endpoint(
            name,
            url,
            this.headers,
            credentials,
            timeout,
            this::http,
            this::relay,
            this::toolsChanged,
            true);
    this.sessions =
        new SessionKeeper(
            name,
            timeout,
            gone -> {
              DownstreamSession session = DownstreamSession.open(endpoint, gone);
              // a new session may be a restarted server with other tools: list them again
              toolsChanged();
              return session;
            });
  }

  /**
   * One client for every session of this server (an SDK transport would build one each, with a
   * selector thread each), built on first use: building one initialises TLS, which an agent that
   * never calls this server does not need at startup.
   */
  private synchronized HttpClient http() {
    if (http == null) {
      http =
          HttpClient.newBuilder()
              .version(HttpClient.Version.HTTP_1_1)
              .connectTimeout(CONNECT_TIMEOUT)
              .build();
    }
    return http;
  }

  @Override
  public String name() {
    return name;
  }

  public String url() {
    return url;
  }

  public Map<String, String> headers() {
    return headers;
  }

  /** What a probe of this server sends: its headers and, read now, its session's credentials. */
  public Map<String, String> probeHeaders() {
    Map<String, String> session = credentials.session();
    if (session.isEmpty()) {
      return headers;
    }
    Map<String, String> all = new HashMap<>(headers);
    all.putAll(session);
    return all;
  }

  /** Calls to this server in flight now (at most maxConcurrentCalls). */
  public int inFlight() {
    return maxConcurrentCalls - slots.availablePermits();
  }

  /** Calls waiting for a place under maxConcurrentCalls. */
  public int waiting() {
    return slots.getQueueLength();
  }

  /** How this server's calls have gone lately, for get_health. */
  public CallHealth callHealth() {
    return health;
  }

  /**
   * Tells {@code watcher} when the server's tools may have changed: it sent {@code
   * notifications/tools/list_changed}, or a new session began (a restarted server). Called on the
   * client's thread: it must return at once.
   */
  public void onToolsChanged(Runnable watcher) {
    toolWatchers.add(watcher);
  }

  private void toolsChanged() {
    tools = null;
    for (Runnable watcher : toolWatchers) {
      try {
        watcher.run();
      } catch (RuntimeException e) {
        LOG.warn("{}: telling a watcher of changed tools failed: {}", name, e.toString());
      }
    }
  }

  /** The tools the server listed last, without asking it; null before its first listing. */
  public List<McpSchema.Tool> listed() {
    return known;
  }

  @Override
  public List<McpSchema.Tool> tools() {
    List<McpSchema.Tool> cached = tools;
    if (cached != null) {
      return cached;
    }
    // one listing at a time: a burst of turns waits for it, each at most its timeout, instead of
    // each asking the server (or queueing behind each other's timeouts)
    CompletableFuture<List<McpSchema.Tool>> pending;
    synchronized (listing) {
      if (tools != null) {
        return tools;
      }
      if (listingNow == null) {
        listingNow =
            CompletableFuture.supplyAsync(this::list, LISTERS)
                .whenComplete((fresh, error) -> {
                  synchronized (listing) {
                    listingNow = null;
                  }
                });
      }
      pending = listingNow;
    }
    String why;
    Throwable cause = null;
    try {
      return pending.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (ExecutionException e) {
      cause = e.getCause();
      why = Failures.describe(cause, timeout);
    } catch (TimeoutException e) {
      why = "timed out after " + timeout.toSeconds() + "s";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      why = "interrupted";
    }
    // a server that listed its tools once keeps them while it cannot list them again (a
    // restarting or rolling server): the model still sees them, and a call to one fails with the
    // connection's own error rather than the model being told of an unknown tool
    // (docs/runtime.md, "Downstream failures")
    List<McpSchema.Tool> last = known;
    if (last != null) {
      LOG.debug("{}: cannot list tools ({}); keeping the {} listed before", name, why, last.size());
      return last;
    }
    throw new IllegalStateException(name + ": cannot list tools: " + why, cause);
  }

  private List<McpSchema.Tool> list() {
    List<McpSchema.Tool> fresh =
        onSession(DownstreamSession::listTools, () -> false).tools().stream()
            .filter(t -> exposed.test(t.name()))
            .toList();
    tools = fresh;
    known = fresh;
    return fresh;
  }

  /**
   * Runs {@code request} on the session calls use now, and once more on a new one when the server
   * answers that it no longer knows the first: it did not process the request, so sending it again
   * is safe, and the caller sees nothing of a restarted server or a replica that handed its
   * sessions over (docs/runtime.md, "Downstream failures"). Not again when the call stopped.
   */
  private <T> T onSession(Function<DownstreamSession, T> request, BooleanSupplier stopped) {
    for (int attempt = 1; ; attempt++) {
      DownstreamSession session = sessions.acquire();
      try {
        return request.apply(session);
      } catch (RuntimeException e) {
        if (attempt > 1 || stopped.getAsBoolean() || !Causes.any(e, SessionGoneException.class)) {
          throw e;
        }
        LOG.debug("{}: the server no longer knew our session; sending again on a new one", name);
      } finally {
        session.exit();
      }
    }
  }

  @Override
  public ToolResult call(String tool, Map<String, Object> arguments, CallContext context) {
    Outcome outcome = outcome(tool, arguments, context);
    if (outcome.failure() != null) {
      return ToolResult.failed(outcome.failure());
    }
    String text = textOf(outcome.answer());
    return Boolean.TRUE.equals(outcome.answer().isError())
        ? ToolResult.failed(text.isEmpty() ? "the tool reported an error" : text)
        : ToolResult.ok(text);
  }

  /**
   * Calls a tool and gives its result as the server sent it (the registry's call_tool, docs/
   * runtime.md, "The registry's MCP endpoint"); a call that got no answer is an {@code isError}
   * result naming the server, the tool and why. Never throws.
   */
  public McpSchema.CallToolResult callThrough(
      String tool, Map<String, Object> arguments, CallContext context) {
    Outcome outcome = outcome(tool, arguments, context);
    return outcome.failure() == null
        ? outcome.answer()
        : McpSchema.CallToolResult.builder()
            .addTextContent(name + "/" + tool + " got no answer: " + outcome.failure())
            .isError(true)
            .build();
  }

  /** A call's answer, as the server sent it, or why it got none. */
  private record Outcome(McpSchema.CallToolResult answer, String failure) {
    static Outcome failed(String why) {
      return new Outcome(null, why);
    }
  }

  private Outcome outcome(String tool, Map<String, Object> arguments, CallContext context) {
    try {
      if (!slots.tryAcquire(timeout.toNanos(), TimeUnit.NANOSECONDS)) {
        return Outcome.failed(
            "no free place within "
                + timeout.toSeconds()
                + "s: calls to "
                + name
                + " in flight at once are limited to maxConcurrentCalls="
                + maxConcurrentCalls);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Outcome.failed("interrupted while waiting for a free place");
    }
    try {
      return callInSlot(tool, arguments, context);
    } finally {
      slots.release();
    }
  }

  private Outcome callInSlot(String tool, Map<String, Object> arguments, CallContext context) {
    Map<String, String> callHeaders;
    try {
      callHeaders = credentials.call(context);
    } catch (Credentials.Refused e) {
      // the caller's credentials failed, not the server: its health is as it was
      return Outcome.failed(e.getMessage());
    }
    // when our caller wants progress, ask for the downstream's too and pass it on (a sub-agent's
    // own steps show up under the caller's token)
    String relayToken = null;
    McpSchema.CallToolRequest.Builder request =
        McpSchema.CallToolRequest.builder().name(tool).arguments(arguments);
    // the calling span in params._meta too, where the MCP semantic conventions put it
    // (docs/observability.md, "Context propagation")
    Map<String, Object> meta = new HashMap<>(TraceHeaders.ofCurrentSpan());
    if (context.progress() != Progress.NONE) {
      relayToken = "pallas-" + UUID.randomUUID();
      relays.put(relayToken, context.progress());
      meta.put("progressToken", relayToken);
    }
    if (!meta.isEmpty()) {
      request.meta(meta);
    }
    try {
      McpSchema.CallToolRequest built = request.build();
      McpSchema.CallToolResult result =
          onSession(
              session -> session.callTool(built, callHeaders, context.cancellation()),
              context.cancellation()::stopped);
      health.answered();
      return result == null ? Outcome.failed("no result") : new Outcome(result, null);
    } catch (RuntimeException e) {
      if (context.cancellation().stopped()) {
        // this call stopped, not the server: its health and the other calls are as they were
        return Outcome.failed("cancelled: " + context.cancellation().reason().words());
      }
      String why = Failures.describe(e, timeout);
      if (Causes.any(e, McpError.class)) {
        // a JSON-RPC error is an answer: the server works
        health.answered();
      } else {
        health.failed(why);
      }
      return Outcome.failed(why);
    } finally {
      if (relayToken != null) {
        relays.remove(relayToken);
      }
    }
  }

  private void relay(McpSchema.ProgressNotification n) {
    Progress progress = relays.get(String.valueOf(n.progressToken()));
    if (progress != null) {
      progress.relayed(n.progress(), n.total(), n.message());
    }
  }

  static String textOf(McpSchema.CallToolResult result) {
    List<String> parts = new ArrayList<>();
    if (result.content() != null) {
      for (McpSchema.Content c : result.content()) {
        if (c instanceof McpSchema.TextContent t) {
          parts.add(t.text());
        } else if (c instanceof McpSchema.ImageContent i) {
          parts.add("[image " + i.mimeType() + "]");
        } else if (c instanceof McpSchema.EmbeddedResource r
            && r.resource() instanceof McpSchema.TextResourceContents t) {
          parts.add(t.text());
        } else if (c instanceof McpSchema.ResourceLink l) {
          parts.add("[resource " + l.uri() + "]");
        }
      }
    }
    if (parts.isEmpty() && result.structuredContent() != null) {
      parts.add(String.valueOf(result.structuredContent()));
    }
    return String.join("\n", parts);
  }

  @Override
  public void close() {
    // closing a session sends its DELETE before returning; an orderly shutdown lets it go out
    sessions.close();
    synchronized (this) {
      if (http != null) {
        http.shutdown();
      }
    }
  }
}
