package ca.helu.pallas.runtime.store;

import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.util.ArrayList;
import java.util.List;
import org.flywaydb.core.api.FlywayException;

/**
 * Why a use of the store failed, in a few words of ours: a driver's message may hold the user's
 * name or the server's text, and an error on the wire names no library class (docs/runtime.md,
 * "When the conversation store fails").
 */
final class StoreFailures {
  private StoreFailures() {}

  static String reason(Throwable e) {
    boolean migrating = false;
    // the deepest cause first: the pool's "no connection in time" wraps the driver's reason
    List<Throwable> chain = new ArrayList<>();
    for (Throwable t = e; t != null && chain.size() < 20; t = t.getCause()) {
      chain.addFirst(t);
    }
    for (Throwable t : chain) {
      migrating |= t instanceof FlywayException;
      if (t instanceof ConnectException) {
        return "connection refused";
      }
      if (t instanceof SocketTimeoutException) {
        return "no answer in time";
      }
      if (t instanceof SQLTransientConnectionException) {
        return "no connection in time";
      }
      if (t instanceof SQLException sql && sql.getSQLState() != null) {
        String state = sql.getSQLState();
        if (state.startsWith("28")) {
          return "it refused the credentials (PALLAS_STORE_USERNAME, PALLAS_STORE_PASSWORD)";
        }
        if (state.startsWith("08")) {
          return "the connection failed";
        }
        if (state.equals("57014")) {
          return "a statement was cancelled (too slow)";
        }
        if (state.startsWith("57P")) {
          return "the server is shutting down or restarting";
        }
        if (state.equals("3D000")) {
          return "the database does not exist";
        }
        if (state.startsWith("42")) {
          return "the schema is not what this version expects (SQLSTATE " + state + ")";
        }
        return "SQLSTATE " + state;
      }
    }
    return migrating ? "its schema could not be migrated" : "unexpected failure";
  }

  /** A store exception's own message (it names the store), else {@link #reason} of the failure. */
  static String of(Exception e) {
    return e instanceof StoreException ? e.getMessage() : reason(e);
  }
}
