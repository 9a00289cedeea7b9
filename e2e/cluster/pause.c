/*
 * The pod sandbox's process (e2e/cluster/README.md): holds the pod's namespaces, reaps orphans,
 * exits on SIGTERM or SIGINT. Built statically by pause-image.py; no registry image is needed.
 */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void terminate(int sig) { (void)sig; _exit(0); }

static void reap(int sig) {
  (void)sig;
  while (waitpid(-1, NULL, WNOHANG) > 0) {
  }
}

int main(void) {
  struct sigaction stop = {0};
  stop.sa_handler = terminate;
  sigaction(SIGTERM, &stop, NULL);
  sigaction(SIGINT, &stop, NULL);
  struct sigaction child = {0};
  child.sa_handler = reap;
  child.sa_flags = SA_NOCLDSTOP | SA_RESTART;
  sigaction(SIGCHLD, &child, NULL);
  for (;;) pause();
}
