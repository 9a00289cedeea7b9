/*
 * The entrypoint of the cluster tier's PostgreSQL image (e2e/cluster/tool-images.py): on an empty
 * data directory, initdb with the superuser's password from a file (the chart's Secret, mounted),
 * password authentication over TCP from anywhere (the pod network; NetworkPolicy is the chart's),
 * then PostgreSQL itself in place of this process, so that it gets the kubelet's signals (the
 * image's StopSignal is SIGINT: PostgreSQL's fast shutdown).
 *
 * Programs are started by their full path (argv[0] too): PostgreSQL finds its own files from it,
 * and a name alone would make it search a PATH the pod may not set.
 *
 * Environment, as the official image reads it (the chart's StatefulSet sets it): PGDATA (default
 * /var/lib/postgresql/data/pgdata, below the volume's root, which may hold lost+found),
 * POSTGRES_USER (default pallas), POSTGRES_PASSWORD or POSTGRES_PASSWORD_FILE (one of them on the
 * first start), POSTGRES_DB (a database created on the first start, besides "postgres").
 *
 * Any UID, as the official image: initdb and single-user mode look the user up by its UID, which an
 * arbitrary one (OpenShift's restricted-v2 SCC assigns one per namespace, in group 0) does not have
 * in the image's /etc/passwd; for them that user is added to a copy in /tmp that nss_wrapper
 * (Debian's libnss-wrapper, preloaded) reads in place of /etc/passwd. The server itself needs no
 * name.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef BIN
#define BIN "/usr/lib/postgresql/15/bin/" /* tool-images.py passes the installed major */
#endif
#ifndef NSS_WRAPPER
#define NSS_WRAPPER "/usr/lib/x86_64-linux-gnu/libnss_wrapper.so" /* tool-images.py passes it */
#endif

static const char *env(const char *name, const char *fallback) {
  const char *value = getenv(name);
  return value != NULL && value[0] != '\0' ? value : fallback;
}

static void fail(const char *what) {
  fprintf(stderr, "pg-entrypoint: %s: %s\n", what, strerror(errno));
  exit(1);
}

static void mkdirs(const char *path) {
  char partial[4096];
  size_t n = strlen(path);
  if (n >= sizeof partial) {
    errno = ENAMETOOLONG;
    fail(path);
  }
  for (size_t i = 1; i <= n; i++) {
    if (path[i] == '/' || path[i] == '\0') {
      memcpy(partial, path, i);
      partial[i] = '\0';
      if (mkdir(partial, 0700) != 0 && errno != EEXIST) {
        fail(partial);
      }
    }
  }
}

/* The superuser's password as a file for initdb: POSTGRES_PASSWORD_FILE, or POSTGRES_PASSWORD
 * written to a file only this user reads (removed after initdb). */
static const char *password_file(int *temporary) {
  const char *file = getenv("POSTGRES_PASSWORD_FILE");
  *temporary = 0;
  if (file != NULL && file[0] != '\0') {
    return file;
  }
  const char *password = getenv("POSTGRES_PASSWORD");
  if (password == NULL || password[0] == '\0') {
    fprintf(stderr, "pg-entrypoint: the data directory is empty and neither POSTGRES_PASSWORD nor"
                    " POSTGRES_PASSWORD_FILE is set\n");
    exit(1);
  }
  static char path[] = "/tmp/pg-entrypoint-pwXXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) {
    fail("mkstemp");
  }
  size_t n = strlen(password);
  if (write(fd, password, n) != (ssize_t)n || close(fd) != 0) {
    fail(path);
  }
  *temporary = 1;
  return path;
}

static void wait_ok(pid_t pid, const char *what) {
  int status;
  if (waitpid(pid, &status, 0) < 0) {
    fail("waitpid");
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "pg-entrypoint: %s failed\n", what);
    exit(1);
  }
}

/* CREATE DATABASE through PostgreSQL's single-user mode, before the server listens. */
static void create_database(const char *data, const char *database) {
  for (const char *c = database; *c; c++) {
    if (*c == '"' || *c < ' ') {
      fprintf(stderr, "pg-entrypoint: POSTGRES_DB holds a character it may not hold\n");
      exit(1);
    }
  }
  int in[2];
  if (pipe(in) != 0) {
    fail("pipe");
  }
  pid_t pid = fork();
  if (pid < 0) {
    fail("fork");
  }
  if (pid == 0) {
    dup2(in[0], 0);
    close(in[0]);
    close(in[1]);
    execl(BIN "postgres", BIN "postgres", "--single", "-j", "-D", data, "postgres", (char *)NULL);
    fail("exec postgres --single");
  }
  close(in[0]);
  char sql[600];
  int n = snprintf(sql, sizeof sql, "CREATE DATABASE \"%s\";\n\n", database);
  if (n < 0 || (size_t)n >= sizeof sql || write(in[1], sql, (size_t)n) != n) {
    fail("writing CREATE DATABASE");
  }
  close(in[1]);
  wait_ok(pid, "CREATE DATABASE");
}

static void initdb(const char *data, const char *user) {
  int temporary;
  const char *password = password_file(&temporary);
  char pwfile[4200];
  snprintf(pwfile, sizeof pwfile, "--pwfile=%s", password);
  pid_t pid = fork();
  if (pid < 0) {
    fail("fork");
  }
  if (pid == 0) {
    execl(BIN "initdb", BIN "initdb", "-D", data, "-U", user, pwfile, "--auth-local=scram-sha-256",
          "--auth-host=scram-sha-256", "-E", "UTF8", "--locale=C", (char *)NULL);
    fail("exec initdb");
  }
  wait_ok(pid, "initdb");
  if (temporary) {
    unlink(password);
  }
  char hba[4200];
  snprintf(hba, sizeof hba, "%s/pg_hba.conf", data);
  FILE *f = fopen(hba, "a");
  if (f == NULL) {
    fail(hba);
  }
  fputs("host all all 0.0.0.0/0 scram-sha-256\nhost all all ::/0 scram-sha-256\n", f);
  if (fclose(f) != 0) {
    fail(hba);
  }
}

/* Whether /etc/passwd has an entry for uid (read as text: this program is static, and glibc's
 * getpwuid would load NSS modules of the build machine). */
static int known(uid_t uid) {
  FILE *f = fopen("/etc/passwd", "r");
  if (f == NULL) {
    return 0;
  }
  char line[1024], id[32];
  snprintf(id, sizeof id, ":%u:", (unsigned)uid);
  int found = 0;
  while (!found && fgets(line, sizeof line, f) != NULL) {
    char *second = strchr(line, ':');
    found = second != NULL && (second = strchr(second + 1, ':')) != NULL &&
            strncmp(second, id, strlen(id)) == 0;
  }
  fclose(f);
  return found;
}

/* For a UID /etc/passwd does not know: a copy naming it "postgres", read through nss_wrapper by
 * initdb and single-user mode (this process's environment, which the server does not keep). */
static void name_this_user(void) {
  uid_t uid = geteuid();
  if (known(uid)) {
    return;
  }
  static const char copy[] = "/tmp/pg-entrypoint-passwd";
  FILE *out = fopen(copy, "w");
  if (out == NULL) {
    fail(copy);
  }
  FILE *in = fopen("/etc/passwd", "r");
  char line[1024];
  while (in != NULL && fgets(line, sizeof line, in) != NULL) {
    if (strncmp(line, "postgres:", 9) != 0) {
      fputs(line, out);
    }
  }
  if (in != NULL) {
    fclose(in);
  }
  fprintf(out, "postgres:x:%u:%u:PostgreSQL:/var/lib/postgresql:/bin/false\n", (unsigned)uid,
          (unsigned)getegid());
  if (fclose(out) != 0) {
    fail(copy);
  }
  setenv("LD_PRELOAD", NSS_WRAPPER, 1);
  setenv("NSS_WRAPPER_PASSWD", copy, 1);
  setenv("NSS_WRAPPER_GROUP", "/etc/group", 1);
}

int main(void) {
  const char *data = env("PGDATA", "/var/lib/postgresql/data/pgdata");
  const char *user = env("POSTGRES_USER", "pallas");
  char version[4200];
  snprintf(version, sizeof version, "%s/PG_VERSION", data);
  struct stat st;
  if (stat(version, &st) != 0) {
    mkdirs(data);
    name_this_user();
    initdb(data, user);
    const char *database = getenv("POSTGRES_DB");
    if (database != NULL && database[0] != '\0' && strcmp(database, "postgres") != 0) {
      create_database(data, database);
    }
    unsetenv("LD_PRELOAD");
    unsetenv("NSS_WRAPPER_PASSWD");
    unsetenv("NSS_WRAPPER_GROUP");
  }
  execl(BIN "postgres", BIN "postgres", "-D", data, "-c", "listen_addresses=*", "-c",
        "unix_socket_directories=/tmp", (char *)NULL);
  fail("exec postgres");
  return 1;
}
