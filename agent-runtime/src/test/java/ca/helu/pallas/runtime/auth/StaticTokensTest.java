package ca.helu.pallas.runtime.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class StaticTokensTest {
  private final StaticTokens tokens =
      new StaticTokens(Map.of("daedalus", "t0ken-of-daedalus", "ci", "t0ken-of-ci"));

  @Test
  void aKnownTokenIsItsNamedCaller() throws Exception {
    assertThat(tokens.authenticate("Bearer t0ken-of-daedalus").name()).isEqualTo("daedalus");
    assertThat(tokens.authenticate("bearer   t0ken-of-ci ").name()).isEqualTo("ci");
  }

  @Test
  void anUnknownMissingOrForeignSchemeTokenIsRefusedWithoutQuotingIt() {
    assertThatThrownBy(() -> tokens.authenticate("Bearer t0ken-of-daedalusX"))
        .isInstanceOfSatisfying(
            AuthFailure.class,
            e -> {
              assertThat(e.code()).isEqualTo(AuthFailure.Code.INVALID_TOKEN);
              assertThat(e.getMessage()).isEqualTo("the bearer token is not known");
            });
    assertThatThrownBy(() -> tokens.authenticate(null))
        .isInstanceOfSatisfying(
            AuthFailure.class, e -> assertThat(e.code()).isEqualTo(AuthFailure.Code.NONE));
    assertThatThrownBy(() -> tokens.authenticate("Basic ZGFlZGFsdXM6eA=="))
        .isInstanceOfSatisfying(
            AuthFailure.class,
            e -> assertThat(e.getMessage()).isEqualTo("the Authorization header is not Bearer"));
  }

  @Test
  void anEmptyTokenCannotBeConfigured() {
    Map<String, String> empty = new LinkedHashMap<>();
    empty.put("x", " ");
    assertThatThrownBy(() -> new StaticTokens(empty)).hasMessage("static token 'x' is empty");
    assertThatThrownBy(() -> new StaticTokens(Map.of()))
        .hasMessage("no static tokens are configured");
  }
}
