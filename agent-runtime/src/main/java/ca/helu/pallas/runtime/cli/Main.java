package ca.helu.pallas.runtime.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code java -jar pallas-agent-runtime.jar serve|registry ...} (docs/configuration.md). */
@Command(
    name = "pallas-agent-runtime",
    mixinStandardHelpOptions = true,
    versionProvider = Main.Version.class,
    description = "Serves Pallas agents over MCP, and their registry.",
    subcommands = {ServeCommand.class, RegistryCommand.class})
public final class Main {
  public static void main(String[] args) {
    LogbackSetup.enable();
    Preload.start();
    int code = commandLine().execute(args);
    if (code != 0) {
      System.exit(code);
    }
  }

  static CommandLine commandLine() {
    return new CommandLine(new Main());
  }

  /** The jar's version. */
  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      String v = Main.class.getPackage().getImplementationVersion();
      return new String[] {"pallas-agent-runtime " + (v == null ? "dev" : v)};
    }
  }
}
