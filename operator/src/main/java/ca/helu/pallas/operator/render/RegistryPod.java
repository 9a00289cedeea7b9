package ca.helu.pallas.operator.render;

import io.fabric8.kubernetes.api.model.EnvVar;
import java.util.List;

/**
 * What the registry's pod needs beyond the ConfigMap it follows.
 *
 * @param env one variable per Secret key its call_tool sends as a server's header, filled from the
 *     Secret, and the static tokens' directory
 * @param configHash digest of what it reads once at start ({@code spec.auth}, those secrets and the
 *     static tokens), so a change rolls it
 */
public record RegistryPod(List<EnvVar> env, String configHash) {}
