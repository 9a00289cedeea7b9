package ca.helu.pallas.operator;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.javaoperatorsdk.operator.AggregatedOperatorException;
import io.javaoperatorsdk.operator.OperatorException;
import java.util.Map;
import org.junit.jupiter.api.Test;

class FailuresTest {
  private static KubernetesClientException refused(String message) {
    return new KubernetesClientException(
        new StatusBuilder().withCode(500).withMessage(message).build());
  }

  @Test
  void eachDependentIsNamedWithTheApiServersMessageAndNoStackTrace() {
    var aggregated =
        new AggregatedOperatorException(
            "Exception(s) during workflow execution. Details:\n - stack traces...",
            Map.of(
                "agent-services",
                new OperatorException(refused("failed to allocate a serviceIP: range is full")),
                "config",
                new RuntimeException(
                    "outer", new IllegalStateException("inner\n\tat x.y(Z.java:1)"))));
    String text = Failures.describe(new OperatorException(aggregated));
    assertThat(text)
        .isEqualTo("agent-services: failed to allocate a serviceIP: range is full; config: inner")
        .doesNotContain("\tat ");
  }

  @Test
  void longMessagesAreCutAndInterruptsRecognised() {
    assertThat(Failures.describe(new RuntimeException("x".repeat(5000))))
        .hasSize(Failures.MAX_MESSAGE)
        .endsWith("...");
    assertThat(Failures.causedByInterrupt(new OperatorException(new InterruptedException())))
        .isTrue();
    assertThat(Failures.causedByInterrupt(new OperatorException("no"))).isFalse();
  }
}
