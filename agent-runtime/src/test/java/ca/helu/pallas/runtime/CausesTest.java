package ca.helu.pallas.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.ConnectException;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

class CausesTest {
  @Test
  void findsATypeAnywhereInTheChainAndTheRoot() {
    Exception e =
        new RuntimeException("outer", new IOException("middle", new ConnectException("refused")));
    assertThat(Causes.find(e, ConnectException.class))
        .get()
        .extracting(Throwable::getMessage)
        .isEqualTo("refused");
    assertThat(Causes.find(e, IOException.class))
        .get()
        .extracting(Throwable::getMessage)
        .isEqualTo("middle");
    assertThat(Causes.find(e, TimeoutException.class)).isEmpty();
    assertThat(Causes.any(e, TimeoutException.class, ConnectException.class)).isTrue();
    assertThat(Causes.root(e).getMessage()).isEqualTo("refused");
  }

  @Test
  void aCycleEnds() {
    RuntimeException a = new RuntimeException("a");
    RuntimeException b = new RuntimeException("b", a);
    a.initCause(b);
    assertThat(Causes.find(a, IOException.class)).isEmpty();
    assertThat(Causes.root(a)).isNotNull();
  }
}
