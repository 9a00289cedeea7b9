package ca.helu.pallas.runtime.llm;

import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * How long a provider asks to wait before the next request (docs/runtime.md, "Deadlines and
 * cancellation"): {@code Retry-After} in seconds or as an HTTP date (RFC 9110, 10.2.3), or OpenAI's
 * {@code retry-after-ms}, which is finer and wins when both are sent.
 */
final class RetryAfter {
  /** Waits beyond this are read as this: a provider's day-long hint ends any turn anyway. */
  static final Duration MAX = Duration.ofDays(1);

  private RetryAfter() {}

  /** The wait a response's headers ask for, from {@code now}; empty when none or unreadable. */
  static Optional<Duration> of(Map<String, List<String>> headers, Instant now) {
    Optional<Duration> millis =
        header(headers, "retry-after-ms").flatMap(RetryAfter::millis).map(RetryAfter::capped);
    if (millis.isPresent()) {
      return millis;
    }
    return header(headers, "retry-after").flatMap(v -> parse(v, now)).map(RetryAfter::capped);
  }

  /** A {@code Retry-After} value: delay-seconds or an HTTP date. */
  static Optional<Duration> parse(String value, Instant now) {
    String v = value.strip();
    if (!v.isEmpty() && v.length() <= 12 && v.chars().allMatch(Character::isDigit)) {
      return Optional.of(Duration.ofSeconds(Long.parseLong(v)));
    }
    try {
      Instant at = ZonedDateTime.parse(v, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant();
      Duration wait = Duration.between(now, at);
      return Optional.of(wait.isNegative() ? Duration.ZERO : wait);
    } catch (DateTimeParseException e) {
      return Optional.empty();
    }
  }

  private static Optional<Duration> millis(String value) {
    try {
      double ms = Double.parseDouble(value.strip());
      return ms >= 0 && Double.isFinite(ms)
          ? Optional.of(Duration.ofNanos((long) Math.min(ms * 1e6, MAX.toNanos())))
          : Optional.empty();
    } catch (NumberFormatException e) {
      return Optional.empty();
    }
  }

  private static Duration capped(Duration wait) {
    return wait.compareTo(MAX) > 0 ? MAX : wait;
  }

  private static Optional<String> header(Map<String, List<String>> headers, String name) {
    for (var e : headers.entrySet()) {
      if (e.getKey() != null && e.getKey().equalsIgnoreCase(name) && !e.getValue().isEmpty()) {
        return Optional.of(e.getValue().get(0));
      }
    }
    return Optional.empty();
  }
}
