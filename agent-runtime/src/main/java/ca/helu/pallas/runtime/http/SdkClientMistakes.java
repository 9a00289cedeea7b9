package ca.helu.pallas.runtime.http;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.turbo.TurboFilter;
import ch.qos.logback.core.spi.FilterReply;
import org.slf4j.LoggerFactory;
import org.slf4j.Marker;

/**
 * The MCP SDK's transport logs ERROR ("Error handling message: Unexpected response for unknown id
 * ...") for a JSON-RPC response that answers no request the server has pending. McpEdgeFilter
 * refuses most such responses itself; one whose id has the form of the server's own ping ids must
 * reach the SDK, and a client could send it again and again. A response nobody awaits is the
 * client's mistake, never a fault of ours, so the line becomes a DEBUG line of ours
 * (docs/runtime.md, "Hostile input": quiet logs).
 */
public final class SdkClientMistakes extends TurboFilter {
  static final String UNKNOWN_RESPONSE = "Unexpected response for unknown id";
  private static final org.slf4j.Logger LOG = LoggerFactory.getLogger(SdkClientMistakes.class);

  /** Installs the filter once in Logback's context (nothing when another SLF4J binding is used). */
  public static synchronized void install() {
    if (LoggerFactory.getILoggerFactory() instanceof LoggerContext context
        && context.getTurboFilterList().stream().noneMatch(SdkClientMistakes.class::isInstance)) {
      SdkClientMistakes filter = new SdkClientMistakes();
      filter.setContext(context);
      filter.start();
      context.addTurboFilter(filter);
    }
  }

  @Override
  public FilterReply decide(
      Marker marker, Logger logger, Level level, String format, Object[] params, Throwable t) {
    if (level == Level.ERROR
        && logger.getName().startsWith("io.modelcontextprotocol")
        && params != null
        && params.length > 0
        && params[0] instanceof String message
        && message.startsWith(UNKNOWN_RESPONSE)) {
      LOG.debug("a client sent a JSON-RPC response to no pending request; ignored");
      return FilterReply.DENY;
    }
    return FilterReply.NEUTRAL;
  }
}
