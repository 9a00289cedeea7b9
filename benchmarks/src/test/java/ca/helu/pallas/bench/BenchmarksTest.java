package ca.helu.pallas.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class BenchmarksTest {
  private static Load.Result cpu(double micros) {
    return new Load.Result(1000, 1, 2, 10_000, 0, micros);
  }

  @Test
  void theRatioIsTakenPairByPairThenTheMedian() {
    // the machine slowed down in the second pair: both sides cost twice as much there
    List<Load.Result> ours = List.of(cpu(110), cpu(240), cpu(130));
    List<Load.Result> base = List.of(cpu(100), cpu(200), cpu(100));

    assertThat(Benchmarks.pairedRatio(ours, base, Load.Result::cpuMicros)).isEqualTo(1.2);
  }

  @Test
  void aRatioOverNothingIsNotANumber() {
    assertThat(Benchmarks.ratio(5, 0)).isNaN();
    assertThat(Benchmarks.ratio(6, 3)).isEqualTo(2.0);
  }
}
