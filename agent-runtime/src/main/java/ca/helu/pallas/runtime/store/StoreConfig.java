package ca.helu.pallas.runtime.store;

import java.net.URI;
import java.time.Duration;

/**
 * Where the PostgreSQL store is and how it keeps histories (docs/configuration.md, "Conversation
 * store"). The credentials come from the environment (PALLAS_STORE_USERNAME,
 * PALLAS_STORE_PASSWORD), never from the command line, and appear in no log line or error: {@link
 * #describe()} names the store by host, port and database only.
 *
 * @param url a JDBC URL, {@code jdbc:postgresql://host:5432/db}
 * @param ttl a conversation without a turn this long is deleted and never read again
 * @param sweepInterval how often expired conversations are deleted
 * @param healthInterval how often the store is checked while nothing else uses it
 * @param timeout the most one use of the store waits for a connection, and for an answer
 */
public record StoreConfig(
    String url,
    String username,
    String password,
    Duration ttl,
    Duration sweepInterval,
    Duration healthInterval,
    Duration timeout) {
  public static final Duration DEFAULT_TTL = Duration.ofDays(30);
  public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(5);

  public StoreConfig {
    if (url == null || !url.startsWith("jdbc:postgresql://")) {
      throw new IllegalArgumentException(
          "the conversation store must be a JDBC URL of PostgreSQL,"
              + " jdbc:postgresql://host:5432/database");
    }
    if (url.contains("password=")) {
      throw new IllegalArgumentException(
          "the conversation store's URL must not hold a password: set PALLAS_STORE_PASSWORD");
    }
    if (ttl.isNegative() || ttl.isZero()) {
      throw new IllegalArgumentException("the history's time to live must be positive");
    }
  }

  /** A store at {@code url} with the default retention and timeouts. */
  public static StoreConfig of(String url, String username, String password) {
    return new StoreConfig(
        url,
        username,
        password,
        DEFAULT_TTL,
        Duration.ofMinutes(1),
        Duration.ofSeconds(5),
        DEFAULT_TIMEOUT);
  }

  public StoreConfig withTtl(Duration timeToLive) {
    return new StoreConfig(
        url, username, password, timeToLive, sweepInterval, healthInterval, timeout);
  }

  public StoreConfig withIntervals(Duration sweep, Duration health) {
    return new StoreConfig(url, username, password, ttl, sweep, health, timeout);
  }

  public StoreConfig withTimeout(Duration wait) {
    return new StoreConfig(url, username, password, ttl, sweepInterval, healthInterval, wait);
  }

  /** The timeout in whole seconds, at least 1: what JDBC's login and query timeouts take. */
  public int timeoutSeconds() {
    return (int) Math.max(1, timeout.toSeconds());
  }

  /** The store in words for logs, errors and health: PostgreSQL's host, port and database. */
  public String describe() {
    URI uri = URI.create(url.substring("jdbc:".length()));
    int port = uri.getPort() < 0 ? 5432 : uri.getPort();
    String path = uri.getPath() == null ? "" : uri.getPath();
    return "PostgreSQL " + uri.getHost() + ":" + port + path;
  }
}
