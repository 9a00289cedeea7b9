package ca.helu.pallas.api.validation;

import ca.helu.pallas.api.Models;
import ca.helu.pallas.api.PallasNames;
import java.util.Map;

/**
 * The patterns of the schema's string fields ({@code @Pattern}, which the CRD carries as is), each
 * with the words a refusal uses for a value that does not match it.
 */
public final class Formats {
  /** Not empty and not only spaces. */
  public static final String NOT_BLANK = "\\S";

  public static final String HEADER_NAME = "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$";
  public static final String ENV_NAME = "^[A-Za-z_][A-Za-z0-9_]*$";
  public static final String REGISTRY_NAMESPACE = "^[a-zA-Z0-9.-]+$";
  public static final String HOST = "^[A-Za-z0-9.-]+$";

  /** A Kubernetes object's name that is a DNS subdomain: a Secret, a PriorityClass... */
  public static final String DNS_SUBDOMAIN =
      "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$";

  /** A key of a Secret. */
  public static final String SECRET_KEY = "^[-._a-zA-Z0-9]+$";

  /** A namespace's name (a DNS label), or * for every namespace. */
  public static final String NAMESPACE = "^(\\*|[a-z0-9]([-a-z0-9]*[a-z0-9])?)$";

  /** A Prometheus duration, as a ServiceMonitor's interval takes it. */
  public static final String DURATION =
      "^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$";

  /** An OAuth client id: printable ASCII, no space. */
  public static final String CLIENT_ID = "^[\\x21-\\x7E]+$";

  /** An OAuth scope (RFC 6749 §3.3: printable ASCII but space, '"' and '\\'). */
  public static final String SCOPE = "^[\\x21\\x23-\\x5B\\x5D-\\x7E]+$";

  private static final Map<String, String> WORDS =
      Map.ofEntries(
          Map.entry(NOT_BLANK, "must not be blank"),
          Map.entry(
              PallasNames.NAME_PATTERN,
              "must be lower-case letters, digits, '-' or '_', start and end with a letter or"
                  + " digit, at most 63 characters"),
          Map.entry(Models.PATTERN, "is not a model: use " + Models.choices()),
          Map.entry(HEADER_NAME, "is not a valid HTTP header name"),
          Map.entry(ENV_NAME, "is not an environment variable name"),
          Map.entry(HOST, "is not a host name (letters, digits, '.' and '-')"),
          Map.entry(
              REGISTRY_NAMESPACE, "must be a reverse-domain name (letters, digits, '.' and '-')"),
          Map.entry(
              DNS_SUBDOMAIN,
              "is not an object name (a DNS subdomain: lower-case letters, digits, '-' and '.',"
                  + " at most 253 characters)"),
          Map.entry(SECRET_KEY, "is not a Secret key (letters, digits, '-', '.' and '_')"),
          Map.entry(NAMESPACE, "is neither a namespace's name (a DNS label) nor *"),
          Map.entry(DURATION, "is not a duration such as 30s or 1m"),
          Map.entry(CLIENT_ID, "is not an OAuth client id (printable ASCII without spaces)"),
          Map.entry(
              SCOPE,
              "is not an OAuth scope (printable ASCII without spaces, '\"' or '\\', at most 256"
                  + " characters)"));

  private Formats() {}

  /** What a value that does not match {@code pattern} is, in words; the pattern if none. */
  public static String words(String pattern) {
    String words = WORDS.get(pattern);
    return words != null ? words : "does not match " + pattern;
  }

  /** Whether the schema has words for a pattern (FormatsTest: every pattern it uses has). */
  public static boolean described(String pattern) {
    return WORDS.containsKey(pattern);
  }
}
