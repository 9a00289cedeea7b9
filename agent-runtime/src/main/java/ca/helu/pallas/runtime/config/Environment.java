package ca.helu.pallas.runtime.config;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The environment variables the runtime sees: the process environment plus a {@code .env} file,
 * whose entries never override a variable already set. Read once at startup and passed on.
 */
public final class Environment {
  private final Map<String, String> vars;

  public Environment(Map<String, String> vars) {
    this.vars = Map.copyOf(vars);
  }

  /** The process environment with {@code dotEnv} (if it exists) underneath it. */
  public static Environment load(Path dotEnv, Map<String, String> processEnv) {
    Map<String, String> merged = new HashMap<>();
    if (dotEnv != null && Files.isRegularFile(dotEnv)) {
      try {
        merged.putAll(parseDotEnv(Files.readAllLines(dotEnv)));
      } catch (IOException e) {
        throw new IllegalStateException("cannot read " + dotEnv + ": " + e.getMessage(), e);
      }
    }
    merged.putAll(processEnv);
    return new Environment(merged);
  }

  /** KEY=VALUE lines; '#' comments, optional 'export ', single or double quotes around values. */
  static Map<String, String> parseDotEnv(List<String> lines) {
    Map<String, String> out = new HashMap<>();
    for (String raw : lines) {
      String line = raw.strip();
      if (line.isEmpty() || line.startsWith("#")) {
        continue;
      }
      if (line.startsWith("export ")) {
        line = line.substring("export ".length()).strip();
      }
      int eq = line.indexOf('=');
      if (eq <= 0) {
        continue;
      }
      String key = line.substring(0, eq).strip();
      String value = line.substring(eq + 1).strip();
      if (value.length() >= 2
          && ((value.startsWith("\"") && value.endsWith("\""))
              || (value.startsWith("'") && value.endsWith("'")))) {
        value = value.substring(1, value.length() - 1);
      } else {
        int comment = value.indexOf(" #");
        if (comment >= 0) {
          value = value.substring(0, comment).strip();
        }
      }
      out.put(key, value);
    }
    return out;
  }

  /** This environment with {@code defaults} underneath it: a variable set here wins. */
  public Environment withDefaults(Map<String, String> defaults) {
    Map<String, String> merged = new HashMap<>(defaults);
    merged.putAll(vars);
    return new Environment(merged);
  }

  public Optional<String> get(String name) {
    return Optional.ofNullable(vars.get(name)).filter(v -> !v.isEmpty());
  }
}
