package ca.helu.pallas.runtime.auth;

/**
 * Who a request's Authorization header says its caller is (docs/runtime.md, "Inbound
 * authentication"): OIDC access tokens ({@link OidcTokens}) or static tokens ({@link
 * StaticTokens}).
 */
public interface Authenticator {
  /**
   * @param authorization the request's Authorization header, or null
   * @throws AuthFailure when the request may not call: no token, or one that is not valid or lacks
   *     a required scope
   */
  Caller authenticate(String authorization) throws AuthFailure;
}
