package ca.helu.pallas.runtime.store;

import static org.assertj.core.api.Assertions.assertThat;

import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.UserMessage;
import java.util.List;
import org.junit.jupiter.api.Test;

class MemoryHistoryTest {
  private static List<ChatMessage> turn(String user, String answer) {
    return List.of(UserMessage.from(user), AiMessage.from(answer));
  }

  @Test
  void theOldestWholeTurnsGoPastTheBudget() {
    MemoryHistory c = new MemoryHistory(100);
    assertThat(c.append(turn("a".repeat(30), "b".repeat(10)))).isEqualTo(40);
    assertThat(c.append(turn("c".repeat(30), "d".repeat(10)))).isEqualTo(40);
    assertThat(c.chars()).isEqualTo(80);
    // a third turn of 40 makes 120 > 100: the first turn goes, user message and answer together
    assertThat(c.append(turn("e".repeat(30), "f".repeat(10)))).isEqualTo(0);
    assertThat(c.chars()).isEqualTo(80);
    assertThat(c.snapshot())
        .extracting(m -> m instanceof UserMessage u ? u.singleText() : ((AiMessage) m).text())
        .containsExactly("c".repeat(30), "d".repeat(10), "e".repeat(30), "f".repeat(10));
  }

  @Test
  void aTurnBiggerThanTheBudgetIsNotKept() {
    MemoryHistory c = new MemoryHistory(100);
    c.append(turn("small", "ok"));
    assertThat(c.append(turn("x".repeat(500), "y"))).isEqualTo(-7);
    assertThat(c.chars()).isZero();
    assertThat(c.snapshot()).isEmpty();
  }
}
