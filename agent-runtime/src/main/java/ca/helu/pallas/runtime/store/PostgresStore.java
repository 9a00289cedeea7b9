package ca.helu.pallas.runtime.store;

import ca.helu.pallas.api.InstanceScope;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.flywaydb.core.Flyway;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Histories in PostgreSQL (docs/runtime.md, "Conversations"): every replica of an agent, and the
 * pods that replace them, read and continue the same conversations. Connections are pooled
 * (HikariCP, a few per process, every wait bounded), the schema is migrated by Flyway from the
 * jar's {@code db/migration} when the store is first reached and found older, and conversations
 * idle past the time to live are deleted by a periodic sweep and never read meanwhile.
 *
 * <p>An unreachable store does not stop the process (docs/runtime.md, "When the conversation store
 * fails"): the calls that need a history fail with an error naming the store, get_health says
 * degraded, pallas_store_up is 0, and all recovers once the store answers again.
 */
public final class PostgresStore implements HistoryStore {
  private static final Logger LOG = LoggerFactory.getLogger(PostgresStore.class);

  /**
   * Connections per process: a shared agent's turn holds one; reads and appends take one briefly.
   */
  static final int POOL_SIZE = 4;

  /**
   * The newest migration in the jar's {@code db/migration} (its {@code V} number; PostgresStoreTest
   * keeps the two in step).
   */
  static final int SCHEMA_VERSION = 5;

  /** PostgreSQL's SQLSTATE for a relation that does not exist. */
  private static final String UNDEFINED_TABLE = "42P01";

  /** How often a replica notes that it is alive (db/migration V5). */
  static final Duration REPLICA_HEARTBEAT = Duration.ofSeconds(2);

  /**
   * A replica not seen for this long has stopped: the streams it ran are taken over by the replica
   * their clients resume on (docs/runtime.md, "Sessions"). Five heartbeats, so that a replica that
   * is merely busy or briefly cut off keeps its turns.
   */
  static final Duration REPLICA_GONE_AFTER = REPLICA_HEARTBEAT.multipliedBy(5);

  private final StoreConfig config;
  private final String deployment;
  private final String replica = replicaId();
  private final HikariDataSource pool;
  private final ScheduledExecutorService background;
  private final Consumer<Boolean> upListener;
  private final Map<String, PostgresHistories> agents = new ConcurrentHashMap<>();
  private volatile boolean migrated;
  private volatile String problem;

  /**
   * A fleet's key in the store: {@code NAMESPACE/NAME} for a manifest with a namespace (the one the
   * operator renders into an agent pod), its name alone for one without (local {@code serve}), so
   * fleets of one name in two namespaces sharing a database keep their conversations apart (docs/
   * configuration.md, "The conversation store").
   */
  public static String fleetKey(String namespace, String name) {
    return namespace == null || namespace.isBlank() ? name : namespace + "/" + name;
  }

  /**
   * Opens the pool and starts checking the store; returns at once even when it cannot be reached.
   *
   * @param deployment the PallasDeployment whose conversations these are, by {@link #fleetKey} (one
   *     database may hold several deployments')
   * @param upListener told after each check whether the store works (pallas_store_up)
   */
  public PostgresStore(StoreConfig config, String deployment, Consumer<Boolean> upListener) {
    this.config = config;
    this.deployment = deployment;
    this.upListener = upListener;
    this.problem = config.describe() + " has not been reached yet";
    HikariConfig hikari = new HikariConfig();
    hikari.setJdbcUrl(config.url());
    hikari.setUsername(config.username());
    hikari.setPassword(config.password());
    hikari.setPoolName("pallas-store");
    hikari.setMaximumPoolSize(POOL_SIZE);
    hikari.setMinimumIdle(1);
    long timeoutMillis = config.timeout().toMillis();
    hikari.setConnectionTimeout(timeoutMillis);
    hikari.setValidationTimeout(Math.max(250, timeoutMillis / 2));
    // the process starts, and stays up, while the store is down: no connection is made here
    hikari.setInitializationFailTimeout(-1);
    long seconds = config.timeoutSeconds();
    hikari.addDataSourceProperty("connectTimeout", seconds);
    hikari.addDataSourceProperty("loginTimeout", seconds);
    // a slow store: no answer within twice the timeout ends the connection (a lock's wait is
    // bounded by lock_timeout below it: PostgresHistories)
    hikari.addDataSourceProperty("socketTimeout", 2 * seconds);
    hikari.addDataSourceProperty("tcpKeepAlive", true);
    hikari.addDataSourceProperty("ApplicationName", "pallas-agent-runtime");
    this.pool = new HikariDataSource(hikari);
    this.background =
        Executors.newSingleThreadScheduledExecutor(
            Thread.ofPlatform().daemon().name("pallas-store").factory());
    background.scheduleWithFixedDelay(
        this::check, 0, config.healthInterval().toMillis(), TimeUnit.MILLISECONDS);
    background.scheduleWithFixedDelay(
        this::heartbeat, 0, REPLICA_HEARTBEAT.toMillis(), TimeUnit.MILLISECONDS);
    background.scheduleWithFixedDelay(
        this::sweep,
        config.sweepInterval().toMillis(),
        config.sweepInterval().toMillis(),
        TimeUnit.MILLISECONDS);
  }

  @Override
  public AgentHistories forAgent(String agent, InstanceScope scope, HistoryBounds bounds) {
    PostgresHistories histories = new PostgresHistories(this, agent, scope, bounds);
    agents.put(agent, histories);
    if (scope == InstanceScope.SHARED) {
      // its turns, one at a time in this process, hold a connection while they run: one more,
      // so that busy shared agents never starve reads and appends
      pool.getHikariConfigMXBean()
          .setMaximumPoolSize(pool.getHikariConfigMXBean().getMaximumPoolSize() + 1);
    }
    return histories;
  }

  @Override
  public boolean shared() {
    return true;
  }

  @Override
  public SessionStores sessionStores() {
    return new SessionStores(new PostgresSessions(this), new PostgresEvents(this));
  }

  @Override
  public String describe() {
    return config.describe();
  }

  @Override
  public Optional<String> problem() {
    return Optional.ofNullable(problem);
  }

  String deployment() {
    return deployment;
  }

  /** This process's id among the replicas on the store: its host (the pod's name) and a nonce. */
  String replica() {
    return replica;
  }

  private static String replicaId() {
    String host = System.getenv("HOSTNAME");
    String nonce = UUID.randomUUID().toString().substring(0, 8);
    return host == null || host.isBlank() ? nonce : host + "/" + nonce;
  }

  StoreConfig config() {
    return config;
  }

  /** A pooled connection, within the timeout; the schema migrated first if it has not been. */
  Connection connection() throws StoreException {
    try {
      migrate();
      return pool.getConnection();
    } catch (SQLException | RuntimeException e) {
      throw failed("could not be reached", e);
    }
  }

  /** The failure of a use of the store: marks it down, and names it without its credentials. */
  StoreException failed(String what, Exception e) {
    String message = config.describe() + " " + what + " (" + StoreFailures.reason(e) + ")";
    markDown(message);
    return new StoreException(message, e);
  }

  void markUp() {
    if (problem != null) {
      LOG.info("conversation store {} works", config.describe());
      problem = null;
    }
    upListener.accept(true);
  }

  private void markDown(String message) {
    if (problem == null || !problem.equals(message)) {
      LOG.warn("conversation store: {}", message);
    }
    problem = message;
    upListener.accept(false);
  }

  private void migrate() throws SQLException {
    if (migrated) {
      return;
    }
    synchronized (this) {
      if (!migrated && !schemaIsCurrent()) {
        Flyway.configure(PostgresStore.class.getClassLoader())
            .dataSource(pool)
            .locations("classpath:db/migration")
            .table("pallas_schema_history")
            // several replicas may start at once: Flyway serializes them with a lock of its own
            .load()
            .migrate();
      }
      migrated = true;
    }
  }

  /**
   * Whether the store's schema already has this jar's newest migration (or a newer one, from a
   * newer release mid-rollout, which Flyway too leaves alone): then only the replica that found it
   * older runs Flyway, and the others do not load it (a scan of the jar and a few hundred classes
   * an agent pod would keep: docs/images.md, "Memory"). A new store, without the table, is Flyway's
   * to set up.
   */
  private boolean schemaIsCurrent() throws SQLException {
    try (Connection c = pool.getConnection();
        Statement s = c.createStatement()) {
      s.setQueryTimeout(config.timeoutSeconds());
      try (ResultSet newest =
          s.executeQuery(
              "SELECT coalesce(max(version::int), 0) FROM pallas_schema_history"
                  + " WHERE success AND version ~ '^[0-9]+$'")) {
        return newest.next() && newest.getInt(1) >= SCHEMA_VERSION;
      }
    } catch (SQLException e) {
      if (UNDEFINED_TABLE.equals(e.getSQLState())) {
        return false;
      }
      throw e;
    }
  }

  /** Checks that the store answers; what get_health and pallas_store_up report. */
  void check() {
    try (Connection c = connection();
        Statement s = c.createStatement()) {
      s.setQueryTimeout(config.timeoutSeconds());
      s.execute("SELECT 1");
      markUp();
    } catch (StoreException e) {
      // marked down already
    } catch (SQLException | RuntimeException e) {
      markDown(config.describe() + " does not answer (" + StoreFailures.reason(e) + ")");
    }
  }

  /** Notes that this replica is alive, for the streams it runs (db/migration V5). */
  private void heartbeat() {
    try (Connection c = connection();
        PreparedStatement seen =
            c.prepareStatement(
                "INSERT INTO pallas_replica (id) VALUES (?)"
                    + " ON CONFLICT (id) DO UPDATE SET seen_at = now()")) {
      seen.setString(1, replica);
      seen.executeUpdate();
    } catch (StoreException e) {
      // marked down already: the streams this replica runs may be taken over meanwhile
    } catch (SQLException | RuntimeException e) {
      LOG.debug("conversation store: noting this replica failed ({})", StoreFailures.reason(e));
    }
  }

  /**
   * Deletes the conversations idle past the time to live and the stream events older than their
   * keep; counts the conversations left for the metrics.
   */
  void sweep() {
    try (Connection c = connection();
        PreparedStatement delete =
            c.prepareStatement(
                "DELETE FROM pallas_conversation WHERE deployment = ?"
                    + " AND last_turn_at < now() - ? * interval '1 millisecond'");
        PreparedStatement events =
            c.prepareStatement(
                "DELETE FROM pallas_mcp_event WHERE deployment = ? AND created_at < now() - interval '"
                    + PostgresEvents.KEEP_MINUTES
                    + " minutes'");
        Statement s = c.createStatement();
        PreparedStatement count =
            c.prepareStatement(
                "SELECT agent, count(*), coalesce(sum(chars), 0) FROM pallas_conversation"
                    + " WHERE deployment = ? GROUP BY agent")) {
      delete.setString(1, deployment);
      delete.setLong(2, config.ttl().toMillis());
      int deleted = delete.executeUpdate();
      if (deleted > 0) {
        LOG.info("deleted {} conversations idle for over {}", deleted, config.ttl());
      }
      events.setString(1, deployment);
      events.executeUpdate();
      // replicas long gone (their streams' events are, too)
      s.executeUpdate("DELETE FROM pallas_replica WHERE seen_at < now() - interval '1 hour'");
      count.setString(1, deployment);
      agents.values().forEach(a -> a.counted(0, 0));
      try (ResultSet rows = count.executeQuery()) {
        while (rows.next()) {
          PostgresHistories agent = agents.get(rows.getString(1));
          if (agent != null) {
            agent.counted(rows.getInt(2), rows.getLong(3));
          }
        }
      }
    } catch (StoreException e) {
      // marked down already; the next sweep tries again
    } catch (SQLException | RuntimeException e) {
      LOG.warn("conversation store: sweep failed ({})", StoreFailures.reason(e));
    }
  }

  /**
   * Stops the store's work; this replica leaves the list of live ones at once, so that a stream it
   * could not finish in its drain is taken over without waiting for its heartbeat to age.
   */
  @Override
  public void close() {
    background.shutdownNow();
    if (migrated) {
      try (Connection c = pool.getConnection();
          PreparedStatement gone = c.prepareStatement("DELETE FROM pallas_replica WHERE id = ?")) {
        gone.setString(1, replica);
        gone.executeUpdate();
      } catch (SQLException | RuntimeException e) {
        LOG.debug("conversation store: leaving the replicas failed ({})", StoreFailures.reason(e));
      }
    }
    pool.close();
  }
}
