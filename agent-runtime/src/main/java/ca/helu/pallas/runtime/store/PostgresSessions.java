package ca.helu.pallas.runtime.store;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * MCP sessions in PostgreSQL (docs/runtime.md, "Sessions"), so that every replica of an agent, and
 * the pods that replace them, serve a session another one opened.
 *
 * <p>A use is written at most every {@link #TOUCH_EVERY} per session and process: idleness is
 * judged in minutes, and a write per request would double each request's work on the database.
 *
 * <p>When the store fails, sessions degrade rather than fail (docs/runtime.md, "When the
 * conversation store fails"): a new session lives in this process only until the store works again
 * (then it is written at its next use), one held here goes on, an unknown one is not found (404,
 * and its client initializes again). The store's failure shows in get_health and pallas_store_up as
 * for histories.
 */
final class PostgresSessions implements SessionStore {
  private static final Logger LOG = LoggerFactory.getLogger(PostgresSessions.class);
  static final Duration TOUCH_EVERY = Duration.ofSeconds(5);

  private final PostgresStore store;
  // when this process last wrote each session's use (System.nanoTime)
  private final Map<String, Long> written = new ConcurrentHashMap<>();
  // sessions opened while the store failed: written at their next use once it works again
  private final Map<String, StoredSession> unsaved = new ConcurrentHashMap<>();

  PostgresSessions(PostgresStore store) {
    this.store = store;
  }

  @Override
  public void save(StoredSession session) {
    if (!insert(session)) {
      unsaved.put(key(session.agent(), session.id()), session);
    }
  }

  /** Writes a new session; false when the store failed (logged). */
  private boolean insert(StoredSession session) {
    try (Connection c = store.connection();
        PreparedStatement insert =
            c.prepareStatement(
                "INSERT INTO pallas_mcp_session (deployment, agent, id, initialize,"
                    + " protocol_version, caller, owner, created_at, last_used_at)"
                    + " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING")) {
      insert.setString(1, store.deployment());
      insert.setString(2, session.agent());
      insert.setString(3, session.id());
      insert.setString(4, session.initialize());
      insert.setString(5, session.protocolVersion());
      insert.setString(6, session.caller());
      insert.setString(7, session.owner());
      insert.setTimestamp(8, Timestamp.from(session.created()));
      insert.setTimestamp(9, Timestamp.from(session.lastUsed()));
      insert.executeUpdate();
      written.put(key(session.agent(), session.id()), System.nanoTime());
      return true;
    } catch (StoreException | SQLException e) {
      LOG.warn(
          "the MCP session of {} lives in this replica only until the store works: {}",
          session.agent(),
          StoreFailures.of(e));
      return false;
    }
  }

  /** One statement: of two replicas claiming at once, the second reads the first's owner. */
  @Override
  public String claim(String agent, String id, String owner) {
    try (Connection c = store.connection();
        PreparedStatement claim =
            c.prepareStatement(
                "UPDATE pallas_mcp_session SET owner = coalesce(owner, ?)"
                    + " WHERE deployment = ? AND agent = ? AND id = ? RETURNING owner")) {
      claim.setString(1, owner);
      claim.setString(2, store.deployment());
      claim.setString(3, agent);
      claim.setString(4, id);
      try (ResultSet row = claim.executeQuery()) {
        return row.next() ? row.getString(1) : null;
      }
    } catch (StoreException | SQLException e) {
      LOG.debug("claiming an MCP session of {} failed: {}", agent, StoreFailures.of(e));
      return null;
    }
  }

  @Override
  public Optional<StoredSession> find(String agent, String id) {
    try (Connection c = store.connection();
        PreparedStatement select =
            c.prepareStatement(
                "SELECT initialize, protocol_version, caller, owner, created_at, last_used_at"
                    + " FROM pallas_mcp_session WHERE deployment = ? AND agent = ? AND id = ?")) {
      select.setString(1, store.deployment());
      select.setString(2, agent);
      select.setString(3, id);
      try (ResultSet row = select.executeQuery()) {
        if (!row.next()) {
          return Optional.empty();
        }
        return Optional.of(
            new StoredSession(
                agent,
                id,
                row.getString(1),
                row.getString(2),
                row.getString(3),
                row.getString(4),
                row.getTimestamp(5).toInstant(),
                row.getTimestamp(6).toInstant()));
      }
    } catch (StoreException | SQLException e) {
      LOG.debug("looking up an MCP session of {} failed: {}", agent, StoreFailures.of(e));
      return Optional.empty();
    }
  }

  @Override
  public boolean touch(String agent, String id, Instant now) {
    String key = key(agent, id);
    StoredSession opened = unsaved.get(key);
    if (opened != null) {
      // opened while the store failed: kept here, and written as soon as the store works
      if (insert(opened)) {
        unsaved.remove(key);
      }
      return true;
    }
    Long last = written.get(key);
    if (last != null && System.nanoTime() - last < TOUCH_EVERY.toNanos()) {
      return true; // written a moment ago: still kept, as far as this replica can tell
    }
    try (Connection c = store.connection();
        PreparedStatement update =
            c.prepareStatement(
                "UPDATE pallas_mcp_session SET last_used_at = greatest(last_used_at, ?)"
                    + " WHERE deployment = ? AND agent = ? AND id = ?")) {
      update.setTimestamp(1, Timestamp.from(now));
      update.setString(2, store.deployment());
      update.setString(3, agent);
      update.setString(4, id);
      if (update.executeUpdate() == 0) {
        written.remove(key);
        return false;
      }
      written.put(key, System.nanoTime());
      return true;
    } catch (StoreException | SQLException e) {
      LOG.debug("noting a use of an MCP session of {} failed: {}", agent, StoreFailures.of(e));
      return true; // held here, it goes on; the store's failure shows in health
    }
  }

  @Override
  public void delete(String agent, String id) {
    written.remove(key(agent, id));
    unsaved.remove(key(agent, id));
    try (Connection c = store.connection();
        PreparedStatement delete =
            c.prepareStatement(
                "DELETE FROM pallas_mcp_session WHERE deployment = ? AND agent = ? AND id = ?")) {
      delete.setString(1, store.deployment());
      delete.setString(2, agent);
      delete.setString(3, id);
      delete.executeUpdate();
    } catch (StoreException | SQLException e) {
      LOG.warn("an ended MCP session of {} stays until it expires: {}", agent, StoreFailures.of(e));
    }
  }

  @Override
  public List<String> expire(String agent, Instant cutoff) {
    List<String> expired = new ArrayList<>();
    try (Connection c = store.connection();
        PreparedStatement delete =
            c.prepareStatement(
                "DELETE FROM pallas_mcp_session WHERE deployment = ? AND agent = ?"
                    + " AND last_used_at < ? RETURNING id")) {
      delete.setString(1, store.deployment());
      delete.setString(2, agent);
      delete.setTimestamp(3, Timestamp.from(cutoff));
      try (ResultSet rows = delete.executeQuery()) {
        while (rows.next()) {
          expired.add(rows.getString(1));
          written.remove(key(agent, rows.getString(1)));
        }
      }
    } catch (StoreException | SQLException e) {
      LOG.debug("expiring MCP sessions of {} failed: {}", agent, StoreFailures.of(e));
    }
    // what this process wrote long ago belongs to sessions gone elsewhere
    long old = System.nanoTime() - 2 * Duration.between(cutoff, Instant.now()).toNanos();
    written.values().removeIf(at -> at - old < 0);
    return expired;
  }

  private static String key(String agent, String id) {
    return agent + '\n' + id;
  }
}
