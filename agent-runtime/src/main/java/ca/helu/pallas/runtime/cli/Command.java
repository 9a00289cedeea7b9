package ca.helu.pallas.runtime.cli;

/** A subcommand of {@link Main}: its options, and what it does once they are applied. */
interface Command {
  CommandOptions options();

  /** Runs the command; the process's exit code (docs/configuration.md). */
  int call() throws Exception;
}
