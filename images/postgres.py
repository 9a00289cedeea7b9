"""A throw-away PostgreSQL from Debian's binaries (the `postgresql` package, which .ci/run installs),
for the AOT cache's training run (images/aot-image.py) and the images benchmark: a data directory
of its own, listening on 127.0.0.1 and a free port, with password authentication; as root it runs
as nobody, since PostgreSQL refuses root (the same as the tests' PostgresServer,
docs/development.md, "PostgreSQL").

    pg = Postgres.start()      # None when the binaries are missing
    env = pg.store_env()       # PALLAS_STORE_URL, _USERNAME, _PASSWORD
    pg.close()
"""
import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time

from image import free_port

USER = "pallas"
PASSWORD = "training-store-password"
NOBODY = 65534


def binaries():
    """The newest of Debian's PostgreSQL bin directories, or None."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"),
                   key=lambda p: int(p.split("/")[-3]) if p.split("/")[-3].isdigit() else 0)
    return os.path.dirname(found[-1]) if found else None


class Postgres:
    def __init__(self, bin_dir):
        self.bin = bin_dir
        self.dir = tempfile.mkdtemp(prefix="pallas-pg-")
        self.port = free_port()
        self.process = None

    @classmethod
    def start(cls, timeout=60):
        """A running PostgreSQL, or None when this machine has no binaries."""
        bin_dir = binaries()
        if bin_dir is None:
            return None
        pg = cls(bin_dir)
        try:
            pg._start(timeout)
        except BaseException:
            pg.close()
            raise
        return pg

    def _as_owner(self):
        if os.geteuid() == 0:
            os.setgid(NOBODY)
            os.setuid(NOBODY)

    def _start(self, timeout):
        with open(os.path.join(self.dir, "pw"), "w") as f:
            f.write(PASSWORD)
        os.makedirs(os.path.join(self.dir, "sock"))
        if os.geteuid() == 0:
            for root, dirs, files in os.walk(self.dir):
                for name in [root] + [os.path.join(root, n) for n in dirs + files]:
                    os.chown(name, NOBODY, NOBODY)
        subprocess.run([os.path.join(self.bin, "initdb"), "-D", os.path.join(self.dir, "data"),
                        "-U", USER, "--auth=scram-sha-256", "--pwfile=" + os.path.join(self.dir, "pw"),
                        "-E", "UTF8", "--no-sync"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
                       preexec_fn=self._as_owner)
        self.process = subprocess.Popen(
            [os.path.join(self.bin, "postgres"), "-D", os.path.join(self.dir, "data"),
             "-p", str(self.port), "-k", os.path.join(self.dir, "sock"),
             "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off"],
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(self.dir, "log"), "w"),
            preexec_fn=self._as_owner, start_new_session=True)
        deadline = time.monotonic() + timeout
        while True:
            if self.process.poll() is not None:
                raise RuntimeError("PostgreSQL exited: " + open(os.path.join(self.dir, "log")).read())
            # accepting connections once the socket is bound and the startup has written its pid
            if os.path.exists(os.path.join(self.dir, "sock", f".s.PGSQL.{self.port}")):
                try:
                    socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                    return
                except OSError:
                    pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"PostgreSQL did not listen within {timeout} s")
            time.sleep(0.1)

    def store_env(self):
        """The agent runtime's conversation store settings (docs/configuration.md)."""
        return {"PALLAS_STORE_URL": f"jdbc:postgresql://127.0.0.1:{self.port}/postgres",
                "PALLAS_STORE_USERNAME": USER, "PALLAS_STORE_PASSWORD": PASSWORD}

    def close(self):
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()  # smart shutdown: the clients have gone
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
