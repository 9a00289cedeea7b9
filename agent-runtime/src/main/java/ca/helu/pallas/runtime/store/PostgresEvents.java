package ca.helu.pallas.runtime.store;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The events of resumable streams in PostgreSQL (docs/runtime.md, "Sessions"), so that a client
 * whose connection broke, or whose pod was replaced, resumes on any replica. Kept for {@link
 * #KEEP_MINUTES} minutes (PostgresStore's sweep deletes older ones) and until their session ends.
 * An event the store cannot take is lost to resumption only: the live stream still carries it.
 */
final class PostgresEvents implements EventStore {
  private static final Logger LOG = LoggerFactory.getLogger(PostgresEvents.class);
  static final int KEEP_MINUTES = 5;

  private final PostgresStore store;

  PostgresEvents(PostgresStore store) {
    this.store = store;
  }

  @Override
  public void append(String agent, String session, String stream, Event event) {
    try (Connection c = store.connection();
        PreparedStatement insert =
            c.prepareStatement(
                "INSERT INTO pallas_mcp_event (deployment, agent, session_id, stream, seq,"
                    + " message, last) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING")) {
      insert.setString(1, store.deployment());
      insert.setString(2, agent);
      insert.setString(3, session);
      insert.setString(4, stream);
      insert.setLong(5, event.seq());
      insert.setString(6, event.message());
      insert.setBoolean(7, event.last());
      insert.executeUpdate();
    } catch (StoreException | SQLException e) {
      LOG.debug(
          "an event of a stream of {} is not kept for resumption: {}", agent, StoreFailures.of(e));
    }
  }

  @Override
  public Optional<List<Event>> after(String agent, String session, String stream, long seq) {
    try (Connection c = store.connection();
        PreparedStatement select =
            c.prepareStatement(
                "SELECT seq, message, last FROM pallas_mcp_event WHERE deployment = ?"
                    + " AND agent = ? AND session_id = ? AND stream = ? AND seq >= ? ORDER BY seq")) {
      select.setString(1, store.deployment());
      select.setString(2, agent);
      select.setString(3, session);
      select.setString(4, stream);
      // the event the client saw last is read too: it shows the stream is kept (for the priming
      // event, seq 0, the stream's request, kept under its number, shows it; streams kept
      // without it show by any event)
      select.setLong(5, seq);
      List<Event> events = new ArrayList<>();
      boolean kept = false;
      try (ResultSet rows = select.executeQuery()) {
        while (rows.next()) {
          kept = true;
          if (rows.getLong(1) > seq) {
            events.add(new Event(rows.getLong(1), rows.getString(2), rows.getBoolean(3)));
          }
        }
      }
      return kept ? Optional.of(events) : Optional.empty();
    } catch (StoreException | SQLException e) {
      LOG.debug("reading a stream of {} for resumption failed: {}", agent, StoreFailures.of(e));
      return Optional.empty();
    }
  }

  @Override
  public void started(String agent, String session, String stream, String request) {
    try (Connection c = store.connection();
        PreparedStatement insert =
            c.prepareStatement(
                "INSERT INTO pallas_mcp_event (deployment, agent, session_id, stream, seq,"
                    + " message, last, replica) VALUES (?, ?, ?, ?, 0, ?, false, ?)"
                    + " ON CONFLICT DO NOTHING")) {
      insert.setString(1, store.deployment());
      insert.setString(2, agent);
      insert.setString(3, session);
      insert.setString(4, stream);
      insert.setString(5, request);
      insert.setString(6, store.replica());
      insert.executeUpdate();
    } catch (StoreException | SQLException e) {
      LOG.debug(
          "a request of {} is not kept to be run again if this replica dies: {}",
          agent,
          StoreFailures.of(e));
    }
  }

  /**
   * Reads who runs the stream, then takes it over only if that replica is the one read (a compare
   * and set on the row: of two replicas adopting at once, the second finds the first's id).
   */
  @Override
  public Optional<Orphan> adopt(String agent, String session, String stream) {
    try (Connection c = store.connection();
        PreparedStatement read =
            c.prepareStatement(
                "SELECT e.replica, e.message, (SELECT max(seq) FROM pallas_mcp_event m"
                    + "   WHERE m.deployment = e.deployment AND m.agent = e.agent"
                    + "   AND m.session_id = e.session_id AND m.stream = e.stream)"
                    + " FROM pallas_mcp_event e WHERE e.deployment = ? AND e.agent = ?"
                    + " AND e.session_id = ? AND e.stream = ? AND e.seq = 0"
                    + " AND NOT EXISTS (SELECT 1 FROM pallas_mcp_event l"
                    + "   WHERE l.deployment = e.deployment AND l.agent = e.agent"
                    + "   AND l.session_id = e.session_id AND l.stream = e.stream AND l.last)"
                    + " AND NOT EXISTS (SELECT 1 FROM pallas_replica r WHERE r.id = e.replica"
                    + "   AND r.seen_at >= now() - ? * interval '1 millisecond')");
        PreparedStatement take =
            c.prepareStatement(
                "UPDATE pallas_mcp_event SET replica = ? WHERE deployment = ? AND agent = ?"
                    + " AND session_id = ? AND stream = ? AND seq = 0 AND replica = ?")) {
      read.setString(1, store.deployment());
      read.setString(2, agent);
      read.setString(3, session);
      read.setString(4, stream);
      read.setLong(5, PostgresStore.REPLICA_GONE_AFTER.toMillis());
      String owner;
      String request;
      long lastSeq;
      try (ResultSet row = read.executeQuery()) {
        if (!row.next()) {
          return Optional.empty();
        }
        owner = row.getString(1);
        request = row.getString(2);
        lastSeq = row.getLong(3);
      }
      take.setString(1, store.replica());
      take.setString(2, store.deployment());
      take.setString(3, agent);
      take.setString(4, session);
      take.setString(5, stream);
      take.setString(6, owner);
      return take.executeUpdate() == 1
          ? Optional.of(new Orphan(request, lastSeq))
          : Optional.empty();
    } catch (StoreException | SQLException e) {
      LOG.debug("taking over a stream of {} failed: {}", agent, StoreFailures.of(e));
      return Optional.empty();
    }
  }

  @Override
  public void forget(String agent, String session) {
    try (Connection c = store.connection();
        PreparedStatement delete =
            c.prepareStatement(
                "DELETE FROM pallas_mcp_event WHERE deployment = ? AND agent = ?"
                    + " AND session_id = ?")) {
      delete.setString(1, store.deployment());
      delete.setString(2, agent);
      delete.setString(3, session);
      delete.executeUpdate();
    } catch (StoreException | SQLException e) {
      LOG.debug(
          "the events of an ended session of {} stay until they expire: {}",
          agent,
          StoreFailures.of(e));
    }
  }
}
