package ca.helu.pallas.runtime.store;

/**
 * The conversation store could not do what was asked (unreachable, too slow, refused): the call
 * that needed it fails with this message, which names the store and never its credentials.
 */
public final class StoreException extends Exception {
  public StoreException(String message, Throwable cause) {
    super(message, cause);
  }
}
