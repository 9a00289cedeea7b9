package ca.helu.pallas.runtime.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The bearer token's characters (docs/contract.md, "Bearer forwarding"): RFC 6750's b64token, as
 * its grammar says, checked by a loop that agrees with that grammar written as a regular
 * expression.
 */
class HeaderChecksTest {
  private static final Pattern B64TOKEN = Pattern.compile("[A-Za-z0-9._~+/-]+=*");

  @Test
  void aBearerTokenIsLettersDigitsAndSixMarksThenAnyEquals() {
    for (String token :
        new String[] {
          "abc",
          "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln-_~+/",
          "dGVzdA==",
          "a=",
          "=",
          "==",
          "a=b",
          "a b",
          "a\u00e9",
          "a\tb",
          "a,b",
          "a\"b",
          "Z9",
          "~",
          "a==="
        }) {
      assertThat(HeaderChecks.isB64Token(token))
          .as(token)
          .isEqualTo(B64TOKEN.matcher(token).matches());
    }
    // every character, each side of the table's end (128) among them
    for (char c = 0; c < 0x180; c++) {
      String token = "a" + c;
      assertThat(HeaderChecks.isB64Token(token))
          .as("U+%04X", (int) c)
          .isEqualTo(B64TOKEN.matcher(token).matches());
    }
    String longJwt = "x".repeat(4096) + "==";
    assertThat(HeaderChecks.isB64Token(longJwt)).isTrue();
    assertThat(HeaderChecks.bearerProblem("Bearer " + longJwt)).isNull();
    assertThat(HeaderChecks.bearerProblem("Bearer \t " + longJwt + "  ")).isNull();
    assertThat(HeaderChecks.bearerProblem("Bearer    ")).isNull();
    assertThat(HeaderChecks.bearerProblem("Bearer  a b ")).contains("RFC 6750");
    assertThat(HeaderChecks.bearerProblem("Bearer =abc")).contains("RFC 6750");
    assertThat(HeaderChecks.bearerProblem("bearer caf\u00e9")).contains("RFC 6750");
    assertThat(HeaderChecks.bearerProblem("Basic caf\u00e9")).as("not ours to judge").isNull();
  }
}
