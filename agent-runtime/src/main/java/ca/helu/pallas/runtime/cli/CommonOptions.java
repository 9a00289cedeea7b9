package ca.helu.pallas.runtime.cli;

import ca.helu.pallas.api.InvalidDeploymentException;
import ca.helu.pallas.api.ManifestParser;
import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.runtime.auth.StaticTokenFiles;
import ca.helu.pallas.runtime.auth.StaticTokens;
import ca.helu.pallas.runtime.config.Environment;
import java.nio.file.Path;
import java.util.List;

/** Options and setup both commands share: the manifest, the listen address, the environment. */
final class CommonOptions {
  Path file;
  String bind = "0.0.0.0";
  Logging.Format logFormat = Logging.Format.auto;

  void addTo(CommandOptions options) {
    options
        .value(
            "-f, --file",
            "FILE",
            "PallasDeployment manifest (default: $PALLAS_DEPLOYMENT_FILE)",
            v -> file = Path.of(v))
        .value("--bind", "ADDRESS", "Listen address (default: " + bind + ")", v -> bind = v)
        .value(
            "--log-format",
            "FORMAT",
            "auto (default: text on a terminal, JSON otherwise), json (one object a line) or text",
            v -> logFormat = CommandOptions.enumValue("--log-format", v, Logging.Format.class));
  }

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

  /**
   * The static tokens of --static-tokens ({@code option}) or PALLAS_STATIC_TOKENS_DIR
   * (docs/configuration.md, "Inbound authentication"); null: none given.
   */
  static StaticTokens staticTokens(Path option, Environment env) {
    Path dir =
        option != null
            ? option
            : env.get("PALLAS_STATIC_TOKENS_DIR")
                .filter(v -> !v.isBlank())
                .map(Path::of)
                .orElse(null);
    return dir == null ? null : StaticTokenFiles.read(dir);
  }
}
