package ca.helu.pallas.runtime.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.UserPrincipalLookupService;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A real PostgreSQL for a test class (docs/development.md, "PostgreSQL"): Debian's binaries ({@code
 * postgresql}, which .ci/run installs), a data directory of its own, listening on 127.0.0.1 and a
 * free port, with password authentication. PostgreSQL refuses to run as root, so as root it runs as
 * nobody (65534). {@link #stop()} and {@link #start()} take it down and bring it back on the same
 * port, as an outage would.
 *
 * <p>{@code @RegisterExtension static final PostgresServer PG = new PostgresServer();}
 */
public final class PostgresServer implements BeforeAllCallback, AfterAllCallback {
  public static final String USER = "pallas";
  public static final String PASSWORD = "s3cret-store-password";
  private static final int NOBODY = 65534;
  private static final AtomicInteger DATABASES = new AtomicInteger();

  private Path dir;
  private Path bin;
  private int port;
  private volatile boolean running;

  @Override
  public void beforeAll(ExtensionContext context) throws Exception {
    bin = binaries();
    dir = Files.createTempDirectory("pallas-pg");
    Path password = dir.resolve("pw");
    Files.writeString(password, PASSWORD);
    Files.createDirectories(dir.resolve("sock"));
    ownedByNobody(dir);
    port = RunningFleet.unboundPort();
    run(
        bin.resolve("initdb").toString(),
        "-D",
        dir.resolve("data").toString(),
        "-U",
        USER,
        "--auth=scram-sha-256",
        "--pwfile=" + password,
        "-E",
        "UTF8",
        "--no-sync");
    start();
  }

  /** Starts the server (again), on the same port; returns once it accepts connections. */
  public void start() throws IOException, InterruptedException {
    run(
        bin.resolve("pg_ctl").toString(),
        "-D",
        dir.resolve("data").toString(),
        "-l",
        dir.resolve("log").toString(),
        "-o",
        "-p " + port + " -h 127.0.0.1 -k " + dir.resolve("sock") + " -F",
        "-w",
        "start");
    running = true;
  }

  /** Stops the server at once (clients are disconnected), as an outage would. */
  public void stop() throws IOException, InterruptedException {
    run(
        bin.resolve("pg_ctl").toString(),
        "-D",
        dir.resolve("data").toString(),
        "-m",
        "fast",
        "-w",
        "stop");
  }

  @Override
  public void afterAll(ExtensionContext context) throws Exception {
    try {
      if (running) {
        stop();
      }
    } finally {
      try (Stream<Path> all = Files.walk(dir)) {
        all.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  public int port() {
    return port;
  }

  /**
   * CPU time (user + system) PostgreSQL's processes have used so far, in nanoseconds: the
   * postmaster and its children, from /proc (for benchmarks).
   */
  public long cpuNanos() throws IOException {
    long postmaster =
        Long.parseLong(Files.readAllLines(dir.resolve("data/postmaster.pid")).getFirst().strip());
    long ticks = 0;
    try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
      for (Path proc : procs.toList()) {
        String name = proc.getFileName().toString();
        if (!name.chars().allMatch(Character::isDigit)) {
          continue;
        }
        String stat;
        try {
          stat = Files.readString(proc.resolve("stat"));
        } catch (IOException gone) {
          continue;
        }
        // the fields after the command's closing parenthesis: state, ppid, ... utime (14), stime
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        long pid = Long.parseLong(name);
        if (pid == postmaster || Long.parseLong(f[1]) == postmaster) {
          ticks += Long.parseLong(f[11]) + Long.parseLong(f[12]);
        }
      }
    }
    return ticks * 10_000_000L; // USER_HZ is 100 on Linux
  }

  /** A new, empty database; its JDBC URL (no credentials in it). */
  public String newDatabase() throws SQLException {
    String name = "pallas_" + DATABASES.incrementAndGet();
    try (Connection c = DriverManager.getConnection(url("postgres"), USER, PASSWORD);
        Statement s = c.createStatement()) {
      s.execute("CREATE DATABASE " + name);
    }
    return url(name);
  }

  public String url(String database) {
    return "jdbc:postgresql://127.0.0.1:" + port + "/" + database;
  }

  /** Runs SQL as the superuser on {@code url}'s database. */
  public static void sql(String url, String statement) throws SQLException {
    try (Connection c = DriverManager.getConnection(url, USER, PASSWORD);
        Statement s = c.createStatement()) {
      s.execute(statement);
    }
  }

  /** The newest PostgreSQL under /usr/lib/postgresql (Debian's layout). */
  private static Path binaries() throws IOException {
    Path root = Path.of("/usr/lib/postgresql");
    if (Files.isDirectory(root)) {
      try (Stream<Path> versions = Files.list(root)) {
        var newest =
            versions
                .filter(v -> Files.isExecutable(v.resolve("bin/initdb")))
                .max(Comparator.comparingInt(v -> Integer.parseInt(v.getFileName().toString())));
        if (newest.isPresent()) {
          return newest.get().resolve("bin");
        }
      }
    }
    throw new IllegalStateException(
        "PostgreSQL is not installed (/usr/lib/postgresql/*/bin/initdb): apt-get install"
            + " postgresql, as .ci/run does");
  }

  private static boolean root() {
    return "root".equals(System.getProperty("user.name"));
  }

  private static void ownedByNobody(Path dir) throws IOException {
    if (!root()) {
      return;
    }
    UserPrincipalLookupService users = dir.getFileSystem().getUserPrincipalLookupService();
    try (Stream<Path> all = Files.walk(dir)) {
      for (Path p : all.toList()) {
        Files.setOwner(p, users.lookupPrincipalByName(Integer.toString(NOBODY)));
      }
    } catch (IOException e) {
      // by name when the system has no numeric lookup
      try (Stream<Path> all = Files.walk(dir)) {
        for (Path p : all.toList()) {
          Files.setOwner(p, users.lookupPrincipalByName("nobody"));
        }
      }
    }
  }

  private void run(String... command) throws IOException, InterruptedException {
    List<String> argv = new ArrayList<>();
    if (root()) {
      argv.addAll(
          List.of("setpriv", "--reuid=" + NOBODY, "--regid=" + NOBODY, "--clear-groups", "--"));
    }
    argv.addAll(List.of(command));
    Process p =
        new ProcessBuilder(argv)
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("commands.log").toFile())
            .directory(dir.toFile())
            .start();
    if (!p.waitFor(60, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new IllegalStateException("timed out: " + String.join(" ", command));
    }
    if (p.exitValue() != 0) {
      throw new IllegalStateException(
          String.join(" ", command)
              + " exited "
              + p.exitValue()
              + ":\n"
              + Files.readString(dir.resolve("commands.log"))
              + (Files.exists(dir.resolve("log")) ? Files.readString(dir.resolve("log")) : ""));
    }
  }
}
