package ca.helu.pallas.runtime.store;

import static org.assertj.core.api.Assertions.assertThat;

import ca.helu.pallas.api.InstanceScope;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.UserMessage;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class MemoryHistoriesTest {
  private final AtomicLong now = new AtomicLong();
  private final MemoryHistories histories =
      new MemoryHistories(
          InstanceScope.CONNECTION, new HistoryBounds(1000, 250, Duration.ofMinutes(30)), now::get);

  private void say(String session, int chars) {
    histories.append(
        session, null, List.of(UserMessage.from("u".repeat(chars)), AiMessage.from("a")));
  }

  @Test
  void aDeletedSessionsHistoryIsFreed() {
    say("s1", 99);
    say("s2", 99);
    assertThat(histories.held()).isEqualTo(2);
    assertThat(histories.chars()).isEqualTo(200);
    histories.delete("s1");
    assertThat(histories.held()).isEqualTo(1);
    assertThat(histories.chars()).isEqualTo(100);
    assertThat(histories.read("s1")).isEmpty();
  }

  @Test
  void anIdleSessionExpires() {
    say("old", 9);
    now.addAndGet(Duration.ofMinutes(20).toNanos());
    say("recent", 9);
    now.addAndGet(Duration.ofMinutes(15).toNanos());
    // old: idle 35 min, recent: 15 min
    assertThat(histories.held()).isEqualTo(1);
    assertThat(histories.read("old")).isEmpty();
    assertThat(histories.read("recent")).isNotEmpty();
    assertThat(histories.chars()).isEqualTo(10);
  }

  @Test
  void theLeastRecentlyUsedGoPastTheAgentsTotal() {
    say("a", 99);
    say("b", 99);
    say("a", 9); // a is now the most recently used: 110 + 100 = 210
    say("c", 99); // 310 > 250: b, the least recently used, goes
    assertThat(histories.read("b")).isEmpty();
    assertThat(histories.read("a")).isNotEmpty();
    assertThat(histories.read("c")).isNotEmpty();
    assertThat(histories.chars()).isEqualTo(210);
  }
}
