package ca.helu.pallas.runtime.cli;

import ca.helu.pallas.api.InvalidDeploymentException;
import ca.helu.pallas.api.ManifestParser;
import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.runtime.config.Environment;
import java.nio.file.Path;
import java.util.List;
import picocli.CommandLine.Option;

/** Options and setup both commands share: the manifest, the listen address, the environment. */
final class CommonOptions {
  @Option(
      names = {"-f", "--file"},
      paramLabel = "FILE",
      description = "PallasDeployment manifest (default: $PALLAS_DEPLOYMENT_FILE)")
  Path file;

  @Option(
      names = "--bind",
      paramLabel = "ADDRESS",
      description = "Listen address (default 0.0.0.0)")
  String bind = "0.0.0.0";

  @Option(
      names = "--log-format",
      paramLabel = "FORMAT",
      description =
          "auto (default: text on a terminal, JSON otherwise), json (one object a line) or text")
  Logging.Format logFormat = Logging.Format.auto;

  /** The process environment over .env, read once; also applies the log-level knobs. */
  Environment environment() {
    Environment env = Environment.load(Path.of(".env"), System.getenv());
    Logging.configure(env, logFormat);
    return env;
  }

  Path resolve(Environment env) {
    if (file != null) {
      return file;
    }
    return env.get("PALLAS_DEPLOYMENT_FILE")
        .map(Path::of)
        .orElseThrow(() ->
            new InvalidDeploymentException(
                null, List.of("no manifest: pass -f FILE or set PALLAS_DEPLOYMENT_FILE")));
  }

  PallasDeployment read(Environment env) {
    return ManifestParser.read(resolve(env));
  }
}
