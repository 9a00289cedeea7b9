package ca.helu.pallas.runtime.health;

/**
 * Told when a health check has a result (docs/runtime.md, "Health", "Health as a resource"). Called
 * on the thread that got the result (a probe's, a tool call's, the provider check's): it must
 * return at once.
 */
@FunctionalInterface
public interface HealthWatcher {
  /**
   * @param flipped one check went from passing to failing or back; false when a result only
   *     confirmed what was known (the agent's overall status may still have changed: the store or
   *     inbound authentication, which are checked on their own)
   */
  void checked(boolean flipped);
}
