package ca.helu.pallas.runtime.cli;

import java.io.PrintStream;
import java.util.List;

/**
 * {@code java -jar pallas-agent-runtime.jar serve|registry ...} (docs/configuration.md). Exit
 * codes: 0 done or help shown, 1 the command failed, 2 a mistake on the command line or in the
 * manifest.
 */
public final class Main {
  static final String USAGE =
      """
      Usage: pallas-agent-runtime COMMAND [OPTIONS]
      Serves Pallas agents over MCP, and their registry.

      Commands:
        serve     %s
        registry  %s
        history   %s

      Options:
        -h, --help     Show this help and exit
        -V, --version  Print the version and exit

      pallas-agent-runtime COMMAND --help lists the command's options.
      """
          .formatted(
              ServeCommand.DESCRIPTION, RegistryCommand.DESCRIPTION, HistoryCommand.DESCRIPTION);

  private Main() {}

  public static void main(String[] args) {
    retryRequestsOnClosedKeptAliveConnections();
    LogbackSetup.enable();
    Preload.start();
    int code = run(List.of(args), System.out, System.err);
    if (code != 0) {
      System.exit(code);
    }
  }

  /**
   * A request sent on a kept-alive connection that its server closed meanwhile, before any byte of
   * an answer, is sent again on a new connection: a draining replica closes the connections its
   * clients left idle, and a load balancer its idle ones, and either can cross the next request
   * (docs/runtime.md, "Errors callers see"). The JDK's HTTP client, which the MCP client and the
   * providers' clients use, does so for idempotent methods only unless told, and MCP and the
   * providers' APIs are POSTs; browsers and OkHttp retry such requests too. Read once, when the
   * client is first used; {@code -Djdk.httpclient.enableAllMethodRetry=false} keeps the JDK's
   * default.
   */
  static void retryRequestsOnClosedKeptAliveConnections() {
    if (System.getProperty("jdk.httpclient.enableAllMethodRetry") == null) {
      System.setProperty("jdk.httpclient.enableAllMethodRetry", "true");
    }
  }

  static int run(List<String> args, PrintStream out, PrintStream err) {
    String first = args.isEmpty() ? "" : args.getFirst();
    Command command;
    int optionsFrom = 1;
    switch (first) {
      case "serve" -> command = new ServeCommand();
      case "registry" -> command = new RegistryCommand();
      case "history" -> {
        if (args.size() < 2 || !args.get(1).equals("delete")) {
          err.println("history: the one subcommand is 'delete' (see pallas-agent-runtime --help)");
          return 2;
        }
        command = new HistoryCommand(out);
        optionsFrom = 2;
      }
      case "-h", "--help" -> {
        out.print(USAGE);
        return 0;
      }
      case "-V", "--version" -> {
        out.println(version());
        return 0;
      }
      default -> {
        String problem = first.isEmpty() ? "no command given" : "unknown command '" + first + "'";
        err.print(problem + "\n\n" + USAGE);
        return 2;
      }
    }
    CommandOptions options = command.options();
    try {
      if (!options.parse(args.subList(optionsFrom, args.size()))) {
        out.print(options.help());
        return 0;
      }
    } catch (CommandOptions.UsageError e) {
      err.println(
          first + ": " + e.getMessage() + " (see pallas-agent-runtime " + first + " --help)");
      return 2;
    }
    try {
      return command.call();
    } catch (Exception e) {
      err.println("pallas-agent-runtime " + first + " failed: " + e);
      e.printStackTrace(err);
      return 1;
    }
  }

  /** The jar's version. */
  static String version() {
    String v = Main.class.getPackage().getImplementationVersion();
    return "pallas-agent-runtime " + (v == null ? "dev" : v);
  }
}
