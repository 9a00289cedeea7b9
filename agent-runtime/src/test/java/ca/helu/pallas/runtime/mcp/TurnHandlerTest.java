package ca.helu.pallas.runtime.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class TurnHandlerTest {
  @Test
  void requestIdsAreEightHexDigitsAndDoNotRepeat() {
    Set<String> ids = new HashSet<>();
    for (int i = 0; i < 1000; i++) {
      String id = TurnHandler.requestId();
      assertThat(id).matches("[0-9a-f]{8}");
      ids.add(id);
    }
    // 1,000 draws from 2^32: a repeat would mean the ids are not random
    assertThat(ids).hasSize(1000);
  }
}
