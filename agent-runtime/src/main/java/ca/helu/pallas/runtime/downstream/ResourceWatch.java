package ca.helu.pallas.runtime.downstream;

import io.modelcontextprotocol.client.McpAsyncClient;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.spec.McpSchema;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;

/**
 * One MCP session with a server, kept open to follow some of its resources (the registry's link to
 * each agent, docs/runtime.md, "The registry's MCP endpoint"): it subscribes to them and reads each
 * once, then the SDK's client reads one again on each {@code notifications/resources/updated}; a
 * ping every interval times the server and finds a lost session, which is then opened anew (the
 * resources subscribed and read again), after a growing delay while the server cannot be reached.
 */
public final class ResourceWatch implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ResourceWatch.class);
  private static final Duration FIRST_RETRY = Duration.ofMillis(200);

  /** Told what the watch sees; called on the client's threads, each call must return at once. */
  public interface Listener {
    /** A resource's text: read at each connect, and again after each update. */
    void read(String uri, String text);

    /** The server answered: {@code initialize}, or a ping, which took {@code latency}. */
    void reached(Duration latency);

    /** The session is lost or cannot be opened, for the reason given. */
    void lost(String why);
  }

  private final String name;
  private final String url;
  private final Credentials credentials;
  private final List<String> uris;
  private final Duration timeout;
  private final Duration interval;
  private final Supplier<HttpClient> http;
  private final Listener listener;
  private final Object lock = new Object();
  private boolean closed; // guarded by lock
  private boolean gone; // guarded by lock: the server no longer knows the session

  /**
   * @param name the server, in log lines
   * @param credentials what its requests carry to say who asks (the registry's identity)
   * @param uris the resources to follow
   * @param timeout each request's
   * @param interval between pings, and the longest delay between attempts to connect
   * @param http the client every watch of the process shares
   */
  public ResourceWatch(
      String name,
      String url,
      Credentials credentials,
      List<String> uris,
      Duration timeout,
      Duration interval,
      Supplier<HttpClient> http,
      Listener listener) {
    this.name = name;
    this.url = url;
    this.credentials = credentials;
    this.uris = List.copyOf(uris);
    this.timeout = timeout;
    this.interval = interval;
    this.http = http;
    this.listener = listener;
  }

  /** Starts connecting, in the background. */
  public ResourceWatch start() {
    Thread.ofVirtual().name("pallas-watch-" + name).start(this::run);
    return this;
  }

  private void run() {
    Duration retry = FIRST_RETRY;
    while (!isClosed()) {
      McpAsyncClient client = null;
      try {
        synchronized (lock) {
          gone = false;
        }
        client = client();
        long started = System.nanoTime();
        client.initialize().block(timeout);
        listener.reached(since(started));
        for (String uri : uris) {
          client.subscribeResource(new McpSchema.SubscribeRequest(uri)).block(timeout);
        }
        for (String uri : uris) {
          deliver(client.readResource(new McpSchema.ReadResourceRequest(uri)).block(timeout));
        }
        retry = FIRST_RETRY;
        while (await(interval)) {
          long pinged = System.nanoTime();
          client.ping().block(timeout);
          listener.reached(since(pinged));
        }
        if (!isClosed()) {
          listener.lost("the server no longer knows the session");
        }
      } catch (RuntimeException e) {
        if (isClosed()) {
          break;
        }
        String why = Failures.describe(e, timeout);
        LOG.debug("watching {}: {}", name, why);
        listener.lost(why);
        await(retry);
        retry = retry.multipliedBy(2).compareTo(interval) > 0 ? interval : retry.multipliedBy(2);
      } finally {
        if (client != null) {
          // ends the session at the server (DELETE), without waiting
          client
              .closeGracefully()
              .timeout(timeout)
              .subscribe(
                  done -> {}, e -> LOG.debug("closing the watch of {}: {}", name, e.toString()));
        }
      }
    }
  }

  private McpAsyncClient client() {
    DownstreamHttpClient client =
        new DownstreamHttpClient(
            http.get(),
            () -> {
              synchronized (lock) {
                gone = true;
                lock.notifyAll();
              }
            });
    return McpClient.async(
            DownstreamSession.transportTo(url, Map.of(), client)
                // read at each request: the registry's identity is a token the kubelet rotates
                .asyncHttpRequestCustomizer((builder, method, target, body, ctx) -> {
                  credentials.session().forEach(builder::setHeader);
                  return Mono.just(builder);
                })
                .build())
        .clientInfo(new McpSchema.Implementation("pallas-registry", "1.0.0"))
        .requestTimeout(timeout)
        .initializationTimeout(timeout)
        .resourcesUpdateConsumer(contents -> Mono.fromRunnable(() -> deliver(contents)))
        .build();
  }

  private void deliver(McpSchema.ReadResourceResult result) {
    if (result != null) {
      deliver(result.contents());
    }
  }

  private void deliver(List<McpSchema.ResourceContents> contents) {
    for (McpSchema.ResourceContents content : contents) {
      if (content instanceof McpSchema.TextResourceContents text) {
        listener.read(text.uri(), text.text());
      }
    }
  }

  /** Waits {@code time}; false when the watch was closed or its session lost meanwhile. */
  private boolean await(Duration time) {
    long deadline = System.nanoTime() + time.toNanos();
    synchronized (lock) {
      while (!closed && !gone) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return true;
        }
        try {
          lock.wait(Math.max(1, left / 1_000_000));
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          closed = true;
        }
      }
      return false;
    }
  }

  private boolean isClosed() {
    synchronized (lock) {
      return closed;
    }
  }

  private static Duration since(long started) {
    return Duration.ofNanos(System.nanoTime() - started);
  }

  @Override
  public void close() {
    synchronized (lock) {
      closed = true;
      lock.notifyAll();
    }
  }
}
