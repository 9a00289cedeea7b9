package ca.helu.pallas.runtime.http;

import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.Writer;

/**
 * Keeps an error the transport writes (status >= 400) away from the wire, for the edge to write it
 * as its own ({@link EdgeErrors}): the body is held, bounded, and never sent.
 */
final class TransportErrors extends HttpServletResponseWrapper {
  private final StringBuilder captured = new StringBuilder();
  int status;

  TransportErrors(HttpServletResponse response) {
    super(response);
  }

  String body() {
    return captured.toString();
  }

  @Override
  public void setStatus(int sc) {
    if (sc >= 400) {
      status = sc;
    } else {
      super.setStatus(sc);
    }
  }

  @Override
  public int getStatus() {
    return status >= 400 ? status : super.getStatus();
  }

  @Override
  public void sendError(int sc, String msg) {
    status = sc;
  }

  @Override
  public void sendError(int sc) {
    status = sc;
  }

  @Override
  public PrintWriter getWriter() throws IOException {
    if (status < 400) {
      return super.getWriter();
    }
    return new PrintWriter(
        new Writer() {
          @Override
          public void write(char[] buf, int off, int len) {
            if (captured.length() < 65536) {
              captured.append(buf, off, Math.min(len, 65536 - captured.length()));
            }
          }

          @Override
          public void flush() {}

          @Override
          public void close() {}
        });
  }

  @Override
  public ServletOutputStream getOutputStream() throws IOException {
    if (status < 400) {
      return super.getOutputStream();
    }
    return new ServletOutputStream() {
      @Override
      public boolean isReady() {
        return true;
      }

      @Override
      public void setWriteListener(WriteListener listener) {}

      @Override
      public void write(int b) {}
    };
  }

  @Override
  public void flushBuffer() throws IOException {
    if (status < 400) {
      super.flushBuffer();
    }
  }
}
