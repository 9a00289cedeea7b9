package ca.helu.pallas.runtime.health;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What get_health answers: the status and the exact JSON text of docs/contract.md sent to the
 * caller.
 */
public record HealthReport(String status, String json) {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** The same JSON as fields in their order, for get_health's structuredContent. */
  public Map<String, Object> fields() {
    try {
      return JSON.readValue(json, new TypeReference<LinkedHashMap<String, Object>>() {});
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The pallas_agent_health_status value: 1 ok, 0.5 degraded, 0 error. */
  public double gaugeValue() {
    return switch (status) {
      case "ok" -> 1.0;
      case "degraded" -> 0.5;
      default -> 0.0;
    };
  }

  /**
   * {@code report} with one more problem: {@code ok} becomes {@code degraded}, an {@code error}
   * stays one; the problem is added to the message, after those already in it.
   */
  public static HealthReport degradedBy(HealthReport report, String problem) {
    try {
      ObjectNode json = (ObjectNode) JSON.readTree(report.json());
      String message = json.path("message").asText("");
      String status = report.status().equals("ok") ? "degraded" : report.status();
      json.put("status", status);
      json.remove("message");
      json.put("message", message.isEmpty() ? problem : message + "; " + problem);
      return new HealthReport(status, json.toString());
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new UncheckedIOException(e);
    }
  }
}
