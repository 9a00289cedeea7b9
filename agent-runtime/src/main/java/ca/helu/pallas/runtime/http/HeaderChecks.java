package ca.helu.pallas.runtime.http;

import io.modelcontextprotocol.spec.ProtocolVersions;
import jakarta.servlet.http.HttpServletRequest;
import java.util.List;
import java.util.Set;

/**
 * The checks of a request's line and headers, before any body is read (docs/runtime.md, "Errors
 * callers see"): the method, the MCP-Protocol-Version header, and a bearer token that could not be
 * forwarded as it is.
 */
final class HeaderChecks {
  static final Set<String> METHODS = Set.of("POST", "GET", "DELETE");

  /** The versions the MCP SDK speaks (the header is checked as the specification requires). */
  static final List<String> PROTOCOL_VERSIONS =
      List.of(
          ProtocolVersions.MCP_2024_11_05,
          ProtocolVersions.MCP_2025_03_26,
          ProtocolVersions.MCP_2025_06_18,
          ProtocolVersions.MCP_2025_11_25);

  private HeaderChecks() {}

  /** Why this request is refused before its body is read, or null. */
  static Refusal problem(HttpServletRequest request) {
    String method = request.getMethod();
    if (!METHODS.contains(method)) {
      return new Refusal(
          405,
          EdgeErrors.INVALID_REQUEST,
          "HTTP method "
              + EdgeErrors.safe(method)
              + " is not allowed here: use POST, GET or DELETE");
    }
    String version = request.getHeader("MCP-Protocol-Version");
    if (version != null && !PROTOCOL_VERSIONS.contains(version)) {
      return new Refusal(
          400,
          EdgeErrors.INVALID_REQUEST,
          "Bad Request: unsupported MCP-Protocol-Version; supported: "
              + String.join(", ", PROTOCOL_VERSIONS));
    }
    String bearer = bearerProblem(request.getHeader("Authorization"));
    return bearer == null ? null : new Refusal(400, EdgeErrors.INVALID_REQUEST, bearer);
  }

  /**
   * Why an Authorization header's bearer token cannot be taken as it is, or null: a token is
   * forwarded byte for byte or not at all (docs/contract.md, "Bearer forwarding"), and HTTP headers
   * carry non-ASCII bytes only as something else. Other schemes are not ours to judge.
   */
  static String bearerProblem(String authorization) {
    if (authorization == null || !authorization.regionMatches(true, 0, "Bearer ", 0, 7)) {
      return null;
    }
    // the token in place, without the blanks around it: no copy of a kilobyte on every request
    int from = 7;
    int to = authorization.length();
    while (from < to && Character.isWhitespace(authorization.charAt(from))) {
      from++;
    }
    while (to > from && Character.isWhitespace(authorization.charAt(to - 1))) {
      to--;
    }
    if (from == to || isB64Token(authorization, from, to)) {
      return null;
    }
    return "Bad Request: the bearer token in the Authorization header has characters a bearer"
        + " token cannot hold (RFC 6750: letters, digits, - . _ ~ + / and a trailing =);"
        + " it is refused rather than altered";
  }

  /**
   * Whether {@code token} is RFC 6750's b64token (letters, digits, - . _ ~ + / and then any '='),
   * what a bearer token may hold, so that it travels byte for byte. Every request with a token is
   * checked, so the check is a table: java.util.regex matching a JWT of a kilobyte showed in the
   * profile of every such call, and so did a chain of comparisons per character, whose branches a
   * token's random characters keep mispredicting (docs/benchmarks.md, "Authentication and
   * tracing").
   */
  static boolean isB64Token(String token) {
    return isB64Token(token, 0, token.length());
  }

  /** Whether the characters of {@code s} from {@code from} to {@code to} are a b64token. */
  private static boolean isB64Token(String s, int from, int to) {
    int i = from;
    while (i < to && isTokenChar(s.charAt(i))) {
      i++;
    }
    if (i == from) {
      return false;
    }
    while (i < to && s.charAt(i) == '=') {
      i++;
    }
    return i == to;
  }

  private static final boolean[] TOKEN_CHARS = new boolean[128];

  static {
    for (char c = 0; c < TOKEN_CHARS.length; c++) {
      TOKEN_CHARS[c] =
          c >= 'a' && c <= 'z'
              || c >= 'A' && c <= 'Z'
              || c >= '0' && c <= '9'
              || "-._~+/".indexOf(c) >= 0;
    }
  }

  private static boolean isTokenChar(char c) {
    return c < TOKEN_CHARS.length && TOKEN_CHARS[c];
  }

  /**
   * Whether a response's id is one this server gives its requests (keep-alive pings): the SDK
   * numbers them {@code <session id>-<n>}.
   */
  static boolean answersThisServer(com.fasterxml.jackson.databind.JsonNode id, String session) {
    return session != null
        && id.isTextual()
        && id.asText().startsWith(session + "-")
        && id.asText().substring(session.length() + 1).chars().allMatch(Character::isDigit);
  }
}
