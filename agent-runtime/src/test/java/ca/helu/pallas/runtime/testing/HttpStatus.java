package ca.helu.pallas.runtime.testing;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

/** The status a GET of a URL answers: for waiting on probes such as /readyz. */
public final class HttpStatus {
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  private HttpStatus() {}

  /** The status code, or -1 when nothing answers. */
  public static int of(String url) {
    try {
      return HTTP.send(
              HttpRequest.newBuilder(URI.create(url)).build(),
              HttpResponse.BodyHandlers.discarding())
          .statusCode();
    } catch (IOException e) {
      return -1;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return -1;
    }
  }
}
