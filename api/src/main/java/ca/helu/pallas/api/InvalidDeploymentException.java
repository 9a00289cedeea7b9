package ca.helu.pallas.api;

import java.util.List;

/** A manifest that cannot be used; every problem names the field and the value at fault. */
public final class InvalidDeploymentException extends RuntimeException {
  private final List<String> problems;

  public InvalidDeploymentException(String source, List<String> problems) {
    super(
        "invalid PallasDeployment"
            + (source == null ? "" : " in " + source)
            + ":\n  - "
            + String.join("\n  - ", problems));
    this.problems = List.copyOf(problems);
  }

  public List<String> problems() {
    return problems;
  }
}
