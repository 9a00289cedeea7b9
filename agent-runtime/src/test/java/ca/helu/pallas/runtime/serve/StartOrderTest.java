package ca.helu.pallas.runtime.serve;

import static org.assertj.core.api.Assertions.assertThat;

import ca.helu.pallas.api.ManifestParser;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class StartOrderTest {
  @Test
  void dependenciesStartInEarlierWaves() {
    var spec = ManifestParser.read(Path.of("../examples/ouranos.yaml")).spec();
    assertThat(StartOrder.waves(spec))
        .containsExactly(List.of("research", "engineering"), List.of("orchestrator"));
  }
}
