package ca.helu.pallas.runtime.auth;

import ca.helu.pallas.api.PallasNames;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The tokens an agent pod presents to the agents it calls (docs/runtime.md, "Agents calling
 * agents"): ServiceAccount tokens the kubelet projects into its identity volume, one per agent it
 * calls, each with that agent's resource identifier as audience ({@link
 * PallasNames#peerTokenFile}). A file is read at every use: the kubelet replaces it well before it
 * expires.
 */
public final class ProjectedTokens {
  private static final Logger LOG = LoggerFactory.getLogger(ProjectedTokens.class);

  private final Path dir;

  /**
   * @param dir the identity volume's mount path ({@code PALLAS_IDENTITY_DIR})
   */
  public ProjectedTokens(Path dir) {
    this.dir = dir;
  }

  /** The token for agent {@code peer}, or empty (logged) when the pod has none. */
  public Optional<String> tokenFor(String peer) {
    Path file = dir.resolve(PallasNames.peerTokenFile(peer));
    try {
      String token = Files.readString(file, StandardCharsets.UTF_8).strip();
      return token.isEmpty() ? Optional.empty() : Optional.of(token);
    } catch (IOException e) {
      LOG.warn("no token for agent {} at {}: its calls go without one", peer, file);
      return Optional.empty();
    }
  }
}
