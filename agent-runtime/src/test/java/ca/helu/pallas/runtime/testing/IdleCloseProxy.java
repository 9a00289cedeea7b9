package ca.helu.pallas.runtime.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP proxy that passes every byte both ways, connections kept alive, and on demand plays a
 * server closing a kept-alive connection just as its client sends the next request on it: what a
 * draining replica does to the connections its clients left idle (docs/runtime.md, "Errors callers
 * see"), a race no timing avoids. After {@link #closeNextReuse()}, the next request that arrives on
 * a connection that has already carried an answer is not passed on: the connection is closed with
 * the request unread.
 */
public final class IdleCloseProxy implements AutoCloseable {
  private final ServerSocket server;
  private final int target;
  private final AtomicBoolean armed = new AtomicBoolean();
  private final AtomicInteger closed = new AtomicInteger();

  public IdleCloseProxy(int target) throws IOException {
    this.target = target;
    this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread.ofVirtual().start(this::accept);
  }

  public int port() {
    return server.getLocalPort();
  }

  /** The next request on a reused connection finds it closed. */
  public void closeNextReuse() {
    armed.set(true);
  }

  /** How many reused connections were closed under a request. */
  public int closedUnderRequests() {
    return closed.get();
  }

  private void accept() {
    while (!server.isClosed()) {
      Socket client;
      try {
        client = server.accept();
      } catch (IOException e) {
        return; // closed
      }
      Socket upstream;
      try {
        upstream = new Socket(InetAddress.getLoopbackAddress(), target);
      } catch (IOException e) {
        // the server is not listening (yet): this connection is refused, the next one tried
        try {
          client.close();
        } catch (IOException ignored) {
          // closed already
        }
        continue;
      }
      // true once the server has answered on this connection since the client last sent
      AtomicBoolean answered = new AtomicBoolean();
      Thread.ofVirtual().start(() -> pipe(upstream, client, answered, null));
      Thread.ofVirtual().start(() -> pipe(client, upstream, null, answered));
    }
  }

  /**
   * Copies from one socket to the other; the server's side marks {@code marks} answered, the
   * client's side reads {@code answered} to tell a new request on a reused connection.
   */
  private void pipe(Socket from, Socket to, AtomicBoolean marks, AtomicBoolean answered) {
    byte[] buffer = new byte[16384];
    try (from;
        to) {
      InputStream in = from.getInputStream();
      OutputStream out = to.getOutputStream();
      int n;
      while ((n = in.read(buffer)) > 0) {
        if (answered != null && answered.getAndSet(false) && armed.compareAndSet(true, false)) {
          closed.incrementAndGet();
          return; // both closed, the request unread
        }
        if (marks != null) {
          marks.set(true);
        }
        out.write(buffer, 0, n);
        out.flush();
      }
    } catch (IOException e) {
      // the other side went: both are closed
    }
  }

  @Override
  public void close() throws IOException {
    server.close();
  }
}
