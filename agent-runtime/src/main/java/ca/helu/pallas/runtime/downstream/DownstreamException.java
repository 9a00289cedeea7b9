package ca.helu.pallas.runtime.downstream;

/**
 * A downstream call or connection that failed, with a message already fit for the model and the
 * logs: ours, bounded, naming the problem, never a library's class name or a server's raw answer.
 */
public class DownstreamException extends RuntimeException {
  public DownstreamException(String message) {
    super(message, null, false, false);
  }

  public DownstreamException(String message, Throwable cause) {
    super(message, cause, false, false);
  }
}
