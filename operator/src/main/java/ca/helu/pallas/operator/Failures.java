package ca.helu.pallas.operator;

import io.fabric8.kubernetes.client.KubernetesClientException;
import io.javaoperatorsdk.operator.AggregatedOperatorException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Why a reconcile failed, in one line for a condition, an event and a log: per dependent the API
 * server's own message (never a stack trace, never a resource body).
 */
final class Failures {
  static final int MAX_MESSAGE = 1000;

  private Failures() {}

  static boolean causedByInterrupt(Throwable e) {
    for (Throwable t = e; t != null; t = next(t)) {
      if (t instanceof InterruptedException) {
        return true;
      }
    }
    return false;
  }

  static String describe(Throwable e) {
    List<String> parts = new ArrayList<>();
    AggregatedOperatorException aggregated = find(e, AggregatedOperatorException.class);
    if (aggregated != null) {
      Map<String, Exception> byDependent = new TreeMap<>(aggregated.getAggregatedExceptions());
      byDependent.forEach((dependent, cause) -> parts.add(dependent + ": " + reason(cause)));
    } else {
      parts.add(reason(e));
    }
    String text = String.join("; ", parts);
    return text.length() <= MAX_MESSAGE ? text : text.substring(0, MAX_MESSAGE - 3) + "...";
  }

  /** The API server's message when it refused a request, else the innermost message. */
  private static String reason(Throwable e) {
    KubernetesClientException api = find(e, KubernetesClientException.class);
    if (api != null && api.getStatus() != null && api.getStatus().getMessage() != null) {
      return api.getStatus().getMessage();
    }
    Throwable t = e;
    while (next(t) != null) {
      t = next(t);
    }
    String message = t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage();
    int newline = message.indexOf('\n');
    return newline < 0 ? message : message.substring(0, newline);
  }

  private static <T extends Throwable> T find(Throwable e, Class<T> type) {
    for (Throwable t = e; t != null; t = next(t)) {
      if (type.isInstance(t)) {
        return type.cast(t);
      }
    }
    return null;
  }

  private static Throwable next(Throwable t) {
    return t.getCause() == t ? null : t.getCause();
  }
}
