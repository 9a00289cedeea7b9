package ca.helu.pallas.runtime.cli;

import ca.helu.pallas.runtime.config.Environment;
import ca.helu.pallas.runtime.store.HistoryAdmin;
import ca.helu.pallas.runtime.store.PostgresStore;
import ca.helu.pallas.runtime.store.StoreConfig;
import ca.helu.pallas.runtime.store.StoreException;
import java.io.PrintStream;

/**
 * {@code history delete}: deletes conversation histories from the PostgreSQL store, a session's or
 * every one of an agent (docs/operations.md, "Conversation histories"). The store's credentials
 * come from PALLAS_STORE_USERNAME and PALLAS_STORE_PASSWORD, never from the command line.
 */
final class HistoryCommand implements Command {
  static final String DESCRIPTION =
      "Delete conversation histories from the conversation store (history delete ...).";

  private final Logging.Format logFormat = Logging.Format.auto;
  private final PrintStream out;
  String store;
  String namespace;
  String deployment;
  String agent;
  String session;
  boolean all;

  HistoryCommand(PrintStream out) {
    this.out = out;
  }

  @Override
  public CommandOptions options() {
    return new CommandOptions("history delete", DESCRIPTION)
        .value(
            "--store",
            "JDBC-URL",
            "The conversation store, jdbc:postgresql://host:5432/db (default: $PALLAS_STORE_URL);"
                + " credentials from PALLAS_STORE_USERNAME and PALLAS_STORE_PASSWORD",
            v -> store = v)
        .value("--deployment", "NAME", "The PallasDeployment (metadata.name)", v -> deployment = v)
        .value(
            "--namespace",
            "NAMESPACE",
            "Its namespace, for a fleet on a cluster (none for a local serve's manifest without one)",
            v -> namespace = v)
        .value("--agent", "NAME", "The agent", v -> agent = v)
        .value(
            "--session",
            "ID",
            "Delete this MCP session's history (instanceScope: connection)",
            v -> session = v)
        .flag(
            "--all",
            "Delete every conversation of the agent (a shared agent's one included)",
            () -> all = true);
  }

  @Override
  public int call() {
    Environment env = Environment.load(java.nio.file.Path.of(".env"), System.getenv());
    Logging.configure(env, logFormat);
    String url = store != null ? store : env.get("PALLAS_STORE_URL").orElse(null);
    if (url == null || deployment == null || agent == null || (session == null) == !all) {
      System.err.println(
          "history delete: needs --store (or PALLAS_STORE_URL), --deployment, --agent, and one"
              + " of --session ID or --all");
      return 2;
    }
    StoreConfig config;
    try {
      config =
          StoreConfig.of(
              url,
              env.get("PALLAS_STORE_USERNAME").orElse(null),
              env.get("PALLAS_STORE_PASSWORD").orElse(null));
    } catch (IllegalArgumentException e) {
      System.err.println("history delete: " + e.getMessage());
      return 2;
    }
    try {
      String fleet = PostgresStore.fleetKey(namespace, deployment);
      int deleted = new HistoryAdmin(config).delete(fleet, agent, all ? null : session);
      out.println(
          "deleted "
              + deleted
              + (deleted == 1 ? " conversation" : " conversations")
              + " of agent "
              + agent
              + " in "
              + fleet
              + " from "
              + config.describe());
      return 0;
    } catch (StoreException e) {
      System.err.println("history delete: " + e.getMessage());
      return 1;
    }
  }
}
