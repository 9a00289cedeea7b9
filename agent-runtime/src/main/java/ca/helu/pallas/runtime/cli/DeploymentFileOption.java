package ca.helu.pallas.runtime.cli;

import ca.helu.pallas.api.InvalidDeploymentException;
import ca.helu.pallas.api.ManifestParser;
import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.runtime.config.Environment;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/** {@code -f FILE}, or PALLAS_DEPLOYMENT_FILE. */
final class DeploymentFileOption {
  @Option(
      names = {"-f", "--file"},
      paramLabel = "FILE",
      description = "PallasDeployment manifest (default: $PALLAS_DEPLOYMENT_FILE)")
  Path file;

  Path resolve(Environment env) {
    if (file != null) {
      return file;
    }
    return env.get("PALLAS_DEPLOYMENT_FILE")
        .map(Path::of)
        .orElseThrow(() ->
            new InvalidDeploymentException(
                null,
                java.util.List.of("no manifest: pass -f FILE or set PALLAS_DEPLOYMENT_FILE")));
  }

  PallasDeployment read(Environment env) {
    return ManifestParser.read(resolve(env));
  }
}
