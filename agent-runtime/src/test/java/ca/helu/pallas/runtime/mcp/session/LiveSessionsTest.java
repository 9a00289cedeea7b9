package ca.helu.pallas.runtime.mcp.session;

import static org.assertj.core.api.Assertions.assertThat;

import ca.helu.pallas.runtime.mcp.session.LiveSessions.Candidate;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Which idle session makes room at the cap (issue 16 §4): the caller's own least recently used one,
 * so that a caller flooding initialize closes its own sessions and nobody else's.
 */
class LiveSessionsTest {
  @Test
  void theCallersOwnOldestIdleSessionGoesFirst() {
    List<Candidate> idle =
        List.of(
            new Candidate("other-old", "10.0.0.2", 1),
            new Candidate("mine-new", "10.0.0.1", 30),
            new Candidate("mine-old", "10.0.0.1", 20),
            new Candidate("other-new", "10.0.0.2", 40));
    assertThat(LiveSessions.oldestIdle(idle, "10.0.0.1")).isEqualTo("mine-old");
    assertThat(LiveSessions.oldestIdle(idle, "10.0.0.2")).isEqualTo("other-old");
  }

  @Test
  void withoutIdleSessionsOfItsOwnTheOldestOfAllGoes() {
    List<Candidate> idle = List.of(new Candidate("b", "10.0.0.2", 5), new Candidate("a", null, 3));
    assertThat(LiveSessions.oldestIdle(idle, "10.0.0.9")).isEqualTo("a");
    assertThat(LiveSessions.oldestIdle(List.of(), "10.0.0.9")).isNull();
  }
}
