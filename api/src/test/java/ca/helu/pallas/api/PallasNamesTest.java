package ca.helu.pallas.api;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class PallasNamesTest {
  @Test
  void anAgentsProbePortIsNeverItsMcpPort() {
    assertThat(PallasNames.probePort(24301)).isEqualTo(PallasNames.PROBE_PORT);
    assertThat(PallasNames.probePort(PallasNames.PROBE_PORT)).isEqualTo(PallasNames.PROBE_PORT + 1);
  }
}
