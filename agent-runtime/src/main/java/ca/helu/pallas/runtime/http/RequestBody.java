package ca.helu.pallas.runtime.http;

import com.fasterxml.jackson.databind.node.NullNode;
import io.undertow.server.HttpServerExchange;
import io.undertow.servlet.handlers.ServletRequestContext;
import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.xnio.IoUtils;

/**
 * One POST's body, read at the edge within the bounds of {@link EdgeLimits} (docs/runtime.md,
 * "Memory", "Limits"): held against the bytes the process holds at once from its first byte until
 * its request is answered, over the body limit refused, and closed with its connection when it does
 * not arrive within the body timeout (a stalled or trickling upload).
 */
final class RequestBody {
  private static final Logger LOG = LoggerFactory.getLogger(RequestBody.class);

  /**
   * One thread closing the connections whose body is late; a deadline met is removed at once, not
   * kept (with its exchange) until its time would have come.
   */
  private static final ScheduledThreadPoolExecutor DEADLINES = deadlines();

  private static ScheduledThreadPoolExecutor deadlines() {
    ScheduledThreadPoolExecutor deadlines =
        new ScheduledThreadPoolExecutor(
            1, Thread.ofPlatform().daemon().name("pallas-body-deadline").factory());
    deadlines.setRemoveOnCancelPolicy(true);
    return deadlines;
  }

  private final RequestPool pool;
  private final EdgeLimits limits;
  private final Duration timeout;
  private byte[] bytes;
  private int length;
  private int held;

  RequestBody(RequestPool pool, Duration timeout) {
    this.pool = pool;
    this.limits = pool.limits();
    this.timeout = timeout;
  }

  /**
   * Reads the body, holding its bytes against the limit: true when it is here; false when it was
   * refused here (answered) or the connection is gone (nobody to answer).
   */
  boolean read(HttpServletRequest request, HttpServletResponse response, long declared)
      throws IOException {
    if (declared > 0) {
      // a body with Content-Length counts in full from its first byte
      if (!pool.tryBodyBytes((int) declared)) {
        response.setHeader("Connection", "close"); // the body is not read
        EdgeErrors.unavailable(response, NullNode.instance, bodiesHeld());
        return false;
      }
      held = (int) declared;
      byte[] into;
      try {
        into = new byte[(int) declared];
      } catch (OutOfMemoryError e) {
        // only with limits set past what the heap holds (the derived ones fit it): this body
        // is refused, and the heap, which had no room for it, is as it was
        LOG.warn("no heap for a request body of {} bytes; refused", declared);
        response.setHeader("Connection", "close"); // the body is not read
        EdgeErrors.unavailable(
            response,
            NullNode.instance,
            "Service Unavailable: this agent has no memory for a body of "
                + EdgeLimits.mib(declared)
                + " now; retry shortly");
        return false;
      }
      return readKnown(request, into);
    }
    return readUnknown(request, response);
  }

  private boolean readKnown(HttpServletRequest request, byte[] into) {
    ScheduledFuture<?> deadline = closeAfterBodyTimeout();
    try {
      length = request.getInputStream().readNBytes(into, 0, into.length);
      bytes = into;
      return true;
    } catch (IOException | RuntimeException e) {
      // a connection gone mid-body; Undertow's stream throws NullPointerException, not an
      // IOException, when the body deadline closes the connection under a read
      LOG.debug("request body not read: {}", e.toString());
      return false;
    } finally {
      deadline.cancel(false);
    }
  }

  /**
   * A body of unknown length (chunked), held piece by piece as it arrives and read up to past the
   * body limit; false when the connection is gone, or when the bytes held would pass their limit
   * (then refused here).
   */
  private boolean readUnknown(HttpServletRequest request, HttpServletResponse response)
      throws IOException {
    ScheduledFuture<?> deadline = closeAfterBodyTimeout();
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    byte[] piece = new byte[64 * 1024];
    try {
      InputStream in = request.getInputStream();
      int n;
      while (body.size() <= limits.maxBodyBytes() && (n = in.read(piece)) != -1) {
        if (!pool.tryBodyBytes(n)) {
          response.setHeader("Connection", "close"); // the rest of the body is not read
          EdgeErrors.unavailable(response, NullNode.instance, bodiesHeld());
          return false;
        }
        held += n;
        body.write(piece, 0, n);
      }
    } catch (IOException | RuntimeException e) {
      // a connection gone mid-body; Undertow's stream throws NullPointerException, not an
      // IOException, when the body deadline closes the connection under a read
      LOG.debug("request body not read: {}", e.toString());
      return false;
    } finally {
      deadline.cancel(false);
    }
    bytes = body.toByteArray();
    length = bytes.length;
    return true;
  }

  /** The bytes read, until the transport takes them. */
  byte[] bytes() {
    return bytes;
  }

  int length() {
    return length;
  }

  /** The bytes for the transport, once: afterwards this body no longer holds them. */
  byte[] take() {
    byte[] taken = bytes;
    bytes = null;
    return taken;
  }

  /** Gives the body's share of the bytes held back, once. */
  void release() {
    pool.releaseBodyBytes(held);
    held = 0;
    bytes = null;
  }

  private String bodiesHeld() {
    return "Service Unavailable: request bodies being received and answered hold the limit of "
        + EdgeLimits.mib(limits.maxBodyBytesHeld())
        + " at once; retry shortly";
  }

  /** A body that does not arrive in time (a stalled or trickling upload) loses its connection. */
  private ScheduledFuture<?> closeAfterBodyTimeout() {
    HttpServerExchange exchange = ServletRequestContext.requireCurrent().getExchange();
    return DEADLINES.schedule(
        () -> {
          LOG.debug("closing a connection whose request body took over {}", timeout);
          IoUtils.safeClose(exchange.getConnection());
        },
        timeout.toMillis(),
        TimeUnit.MILLISECONDS);
  }

  /** The request with this body already read: the transport takes the bytes from the edge. */
  HttpServletRequest cached(HttpServletRequest request) {
    return new CachedBody(request, this);
  }

  /** The request with its body already read: the transport takes the bytes from the edge. */
  private static final class CachedBody extends HttpServletRequestWrapper {
    private final RequestBody body;

    CachedBody(HttpServletRequest request, RequestBody body) {
      super(request);
      this.body = body;
    }

    @Override
    public ServletInputStream getInputStream() {
      int length = body.length();
      byte[] bytes = body.take();
      ByteArrayInputStream in =
          bytes == null
              ? new ByteArrayInputStream(new byte[0])
              : new ByteArrayInputStream(bytes, 0, length);
      return new ServletInputStream() {
        @Override
        public boolean isFinished() {
          return in.available() == 0;
        }

        @Override
        public boolean isReady() {
          return true;
        }

        @Override
        public void setReadListener(ReadListener listener) {
          // the whole body is already here: all of it is available, then it is all read
          try {
            listener.onDataAvailable();
            listener.onAllDataRead();
          } catch (IOException e) {
            listener.onError(e);
          }
        }

        @Override
        public int read() {
          return in.read();
        }

        @Override
        public int read(byte[] b, int off, int len) {
          return in.read(b, off, len);
        }

        // the body at its length: InputStream's own would read it through a 16 KiB buffer
        @Override
        public byte[] readAllBytes() {
          return in.readAllBytes();
        }
      };
    }

    @Override
    public BufferedReader getReader() {
      return new BufferedReader(new InputStreamReader(getInputStream(), StandardCharsets.UTF_8));
    }
  }
}
