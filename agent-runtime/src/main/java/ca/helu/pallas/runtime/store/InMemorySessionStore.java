package ca.helu.pallas.runtime.store;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Sessions kept in this process: shared by every agent server of the process (serve's default), so
 * a session outlives nothing the process does not; a store the replicas share (PostgreSQL) makes
 * them survive a pod.
 */
public final class InMemorySessionStore implements SessionStore {
  private record Key(String agent, String id) {}

  private final Map<Key, StoredSession> sessions = new ConcurrentHashMap<>();

  @Override
  public void save(StoredSession session) {
    sessions.put(new Key(session.agent(), session.id()), session);
  }

  @Override
  public Optional<StoredSession> find(String agent, String id) {
    return Optional.ofNullable(sessions.get(new Key(agent, id)));
  }

  @Override
  public boolean touch(String agent, String id, Instant now) {
    return sessions.computeIfPresent(
            new Key(agent, id),
            (k, s) ->
                new StoredSession(
                    s.agent(),
                    s.id(),
                    s.initialize(),
                    s.protocolVersion(),
                    s.caller(),
                    s.owner(),
                    s.created(),
                    now.isAfter(s.lastUsed()) ? now : s.lastUsed()))
        != null;
  }

  @Override
  public String claim(String agent, String id, String owner) {
    StoredSession claimed =
        sessions.computeIfPresent(
            new Key(agent, id),
            (k, s) ->
                s.owner() != null
                    ? s
                    : new StoredSession(
                        s.agent(),
                        s.id(),
                        s.initialize(),
                        s.protocolVersion(),
                        s.caller(),
                        owner,
                        s.created(),
                        s.lastUsed()));
    return claimed == null ? null : claimed.owner();
  }

  @Override
  public void delete(String agent, String id) {
    sessions.remove(new Key(agent, id));
  }

  @Override
  public List<String> expire(String agent, Instant cutoff) {
    List<String> expired = new ArrayList<>();
    sessions.forEach((key, session) -> {
      if (key.agent().equals(agent)
          && session.lastUsed().isBefore(cutoff)
          && sessions.remove(key, session)) {
        expired.add(key.id());
      }
    });
    return expired;
  }
}
