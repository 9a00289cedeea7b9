package ca.helu.pallas.api;

/**
 * The environment variable that carries a Secret key into an agent pod. The operator sets it from
 * the Secret; the runtime reads a {@code secretKeyRef} from it.
 *
 * <p>The encoding is injective, so two different Secret/key pairs never share a variable: letters
 * and digits stay as they are, {@code _} becomes {@code _u}, {@code -} {@code _h}, {@code .} {@code
 * _d}, and {@code __} separates the Secret name from the key. {@code llm}/{@code OPENAI_API_KEY} is
 * {@code PALLAS_SECRET_llm__OPENAI_uAPI_uKEY}; {@code a-b}/{@code c} and {@code a}/{@code b-c} are
 * {@code PALLAS_SECRET_a_hb__c} and {@code PALLAS_SECRET_a__b_hc}.
 */
public final class SecretVariables {
  public static final String PREFIX = "PALLAS_SECRET_";

  private SecretVariables() {}

  public static String nameFor(SecretValue.SecretKeyRef ref) {
    return PREFIX + encode(ref.name()) + "__" + encode(ref.key());
  }

  private static String encode(String s) {
    StringBuilder out = new StringBuilder(s.length() + 8);
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '_' -> out.append("_u");
        case '-' -> out.append("_h");
        case '.' -> out.append("_d");
        default -> {
          if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
            out.append(c);
          } else {
            // Secret names and keys hold only [-._a-zA-Z0-9]; anything else is spelled out
            out.append("_x").append(String.format("%04x", (int) c));
          }
        }
      }
    }
    return out.toString();
  }
}
