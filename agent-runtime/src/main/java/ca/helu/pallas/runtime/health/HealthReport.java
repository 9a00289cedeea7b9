package ca.helu.pallas.runtime.health;

/**
 * What get_health answers: the status and the exact JSON text of docs/contract.md sent to the
 * caller.
 */
public record HealthReport(String status, String json) {
  /** The pallas_agent_health_status value: 1 ok, 0.5 degraded, 0 error. */
  public double gaugeValue() {
    return switch (status) {
      case "ok" -> 1.0;
      case "degraded" -> 0.5;
      default -> 0.0;
    };
  }
}
