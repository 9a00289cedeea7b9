package ca.helu.pallas.runtime.downstream;

import ca.helu.pallas.runtime.auth.CarriedCaller;
import ca.helu.pallas.runtime.auth.TokenExchange;
import ca.helu.pallas.runtime.loop.CallContext;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * What the requests to one downstream server carry to say who asks (docs/runtime.md, "Downstream
 * credentials"), beside the server's configured headers: nothing, the caller's own token ({@link
 * #forward}), a token exchanged for it ({@link #exchange}), or for another agent of the fleet the
 * calling agent's identity and the caller it calls for ({@link #peer}). A call's headers ride its
 * tools/call alone, in the Reactor context of that one request (never a thread-local, never
 * shared), so concurrent calls cannot see each other's.
 */
public interface Credentials {
  /** Nothing beside the server's configured headers. */
  Credentials NONE = new Credentials() {};

  /**
   * Headers of every request to the server, made for no caller in particular (its session's
   * initialize, tools/list, the stream, the DELETE) and of each call too.
   */
  default Map<String, String> session() {
    return Map.of();
  }

  /**
   * Headers of one caller's tools/call, beside (and over) {@link #session()}'s.
   *
   * @throws Refused when the call cannot be made for this caller; its message says why
   */
  default Map<String, String> call(CallContext call) throws Refused {
    return Map.of();
  }

  /** A call that cannot carry what the server asks for; the message is the tool call's failure. */
  final class Refused extends Exception {
    public Refused(String message) {
      super(message, null, false, false);
    }
  }

  /** The caller's own bearer, on that caller's calls (forwardInboundAuth). */
  static Credentials forward() {
    return new Credentials() {
      @Override
      public Map<String, String> call(CallContext call) {
        return call.bearer().map(Credentials::bearer).orElse(Map.of());
      }
    };
  }

  /**
   * A token the issuer exchanged for the caller's, on that caller's calls (tokenExchange); a call
   * without the caller's own token (no caller, or one that came through another agent of the fleet)
   * fails, naming why.
   */
  static Credentials exchange(TokenExchange exchange) {
    return new Credentials() {
      @Override
      public Map<String, String> call(CallContext call) throws Refused {
        if (call.bearer().isEmpty()) {
          throw new Refused(
              call.caller().isPresent()
                  ? "this server takes a token exchanged for the caller's own, and this call"
                      + " came from another agent of the fleet, which passes on no caller's token"
                  : "this server takes a token exchanged for the caller's own, and the call"
                      + " carries none");
        }
        try {
          return bearer(exchange.exchange(call.bearer().get()));
        } catch (TokenExchange.Failure e) {
          throw new Refused(e.getMessage());
        }
      }
    };
  }

  /** Credentials whose every call fails with {@code why} (e.g. a secret that is not set). */
  static Credentials refused(String why) {
    return new Credentials() {
      @Override
      public Map<String, String> call(CallContext call) throws Refused {
        throw new Refused(why);
      }
    };
  }

  /**
   * Another agent of the fleet: every request carries the calling agent's own identity, read at
   * each request ({@code token}: a projected token the kubelet rotates) with its name, and each
   * call the caller it is made for (docs/runtime.md, "Agents calling agents").
   *
   * @param agent the calling agent's name, or null for the registry
   */
  static Credentials peer(String agent, Supplier<Optional<String>> token) {
    return new Credentials() {
      @Override
      public Map<String, String> session() {
        Map<String, String> headers = new LinkedHashMap<>();
        token.get().ifPresent(t -> headers.putAll(bearer(t)));
        if (agent != null) {
          headers.put(CarriedCaller.AGENT_HEADER, agent);
        }
        return headers;
      }

      @Override
      public Map<String, String> call(CallContext call) {
        Map<String, String> headers = new LinkedHashMap<>(session());
        call.caller().ifPresent(c -> headers.putAll(CarriedCaller.headers(c.name(), c.client())));
        return headers;
      }
    };
  }

  private static Map<String, String> bearer(String token) {
    return Map.of("Authorization", "Bearer " + token);
  }
}
