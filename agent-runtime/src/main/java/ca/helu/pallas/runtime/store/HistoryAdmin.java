package ca.helu.pallas.runtime.store;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;

/**
 * Deletes stored histories on an operator's request ({@code pallas-agent-runtime history delete},
 * docs/operations.md, "Conversation histories"): a session's, or every conversation of an agent.
 */
public final class HistoryAdmin {
  private final StoreConfig config;

  public HistoryAdmin(StoreConfig config) {
    this.config = config;
  }

  /**
   * Deletes the conversations of {@code agent} in {@code deployment}: the one of {@code session},
   * or all of them when it is null. Returns how many were deleted.
   */
  public int delete(String deployment, String agent, String session) throws StoreException {
    String sql =
        "DELETE FROM pallas_conversation WHERE deployment = ? AND agent = ?"
            + (session == null ? "" : " AND session_id = ?");
    DriverManager.setLoginTimeout(config.timeoutSeconds());
    try (Connection c =
            DriverManager.getConnection(config.url(), config.username(), config.password());
        PreparedStatement delete = c.prepareStatement(sql)) {
      delete.setString(1, deployment);
      delete.setString(2, agent);
      if (session != null) {
        delete.setString(3, session);
      }
      return delete.executeUpdate();
    } catch (SQLException e) {
      throw new StoreException(
          config.describe() + ": could not delete (" + StoreFailures.reason(e) + ")", e);
    }
  }
}
