package ca.helu.pallas.operator.verify;

import java.net.Authenticator;
import java.net.CookieHandler;
import java.net.ProxySelector;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.concurrent.Executor;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;

/**
 * Hands the MCP SDK's transport one shared client. The SDK (2.1) builds a new {@link HttpClient}
 * for every transport and never closes it, and each holds a selector thread and its connections
 * until it is collected: one handshake per agent every few minutes would pile them up. The SDK sets
 * only the connect timeout, which the shared client already has; anything else it sets is refused
 * loudly, so that an SDK update that sets more is looked at, not silently ignored (the runtime's
 * DownstreamHttpClient does the same).
 */
record SharedHttpClientBuilder(HttpClient client) implements HttpClient.Builder {
  @Override
  public HttpClient.Builder connectTimeout(Duration duration) {
    return this;
  }

  @Override
  public HttpClient build() {
    return client;
  }

  private static UnsupportedOperationException unsupported(String what) {
    return new UnsupportedOperationException(
        "the MCP SDK set " + what + " on its HTTP client; the operator's shared client does not");
  }

  @Override
  public HttpClient.Builder cookieHandler(CookieHandler cookieHandler) {
    throw unsupported("a cookie handler");
  }

  @Override
  public HttpClient.Builder sslContext(SSLContext sslContext) {
    throw unsupported("an SSL context");
  }

  @Override
  public HttpClient.Builder sslParameters(SSLParameters sslParameters) {
    throw unsupported("SSL parameters");
  }

  @Override
  public HttpClient.Builder executor(Executor executor) {
    throw unsupported("an executor");
  }

  @Override
  public HttpClient.Builder followRedirects(HttpClient.Redirect policy) {
    throw unsupported("a redirect policy");
  }

  @Override
  public HttpClient.Builder version(HttpClient.Version version) {
    throw unsupported("an HTTP version");
  }

  @Override
  public HttpClient.Builder priority(int priority) {
    throw unsupported("a priority");
  }

  @Override
  public HttpClient.Builder proxy(ProxySelector proxySelector) {
    throw unsupported("a proxy");
  }

  @Override
  public HttpClient.Builder authenticator(Authenticator authenticator) {
    throw unsupported("an authenticator");
  }
}
