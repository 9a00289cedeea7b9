package ca.helu.pallas.runtime.http;

/** The agent's MCP sessions, as the edge needs them: room for a new one, and which are open. */
public interface EdgeSessions {
  EdgeSessions UNBOUNDED =
      new EdgeSessions() {
        @Override
        public boolean reserve(String caller) {
          return true;
        }

        @Override
        public void release() {}

        @Override
        public boolean known(String session) {
          return true;
        }

        @Override
        public boolean admits(String session, String caller) {
          return true;
        }
      };

  /**
   * Holds room for a session being initialized by {@code caller} (its address), making room at the
   * cap by closing the oldest idle session, the caller's own first; false when every session is
   * busy.
   */
  boolean reserve(String caller);

  /** The initialize that reserved room has been answered (its session counts by itself). */
  void release();

  /** Whether this session is open (on this replica, or on another one that shares its store). */
  boolean known(String session);

  /**
   * Whether {@code caller} (an authenticated caller's name; null without a token) may use the
   * session, which belongs to the caller who opened it or first used it with a token, on every
   * replica; an unowned session is claimed by this caller.
   */
  boolean admits(String session, String caller);
}
