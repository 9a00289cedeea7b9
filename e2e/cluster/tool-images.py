#!/usr/bin/env python3
"""Builds the images the real-cluster tier runs besides Pallas' own, as docker-archive tarballs,
without a registry or a Docker engine (e2e/cluster/README.md):

  pallas-daedalus:test         this machine's Python, the official MCP SDK (e2e/requirements.txt)
                               and e2e/python/daedalus_job.py: Daedalus as a Job
  pallas-mcp-everything:test   this machine's Node.js and @modelcontextprotocol/server-everything
                               from npm, serving Streamable HTTP on port 3001
  prometheus:<version>, prometheus-operator:<version>, prometheus-config-reloader:<version>
                               the binaries tools/go-binaries.sh builds (found on the PATH)
  pallas-postgres:test         Debian's PostgreSQL (the package `cluster.sh prepare` and .ci/run
                               install) and pg-entrypoint.c: the chart's fleet store
  pallas-jaeger:test           with --jaeger: that Jaeger v2 binary (testing/JaegerServer builds it
                               from the Go module proxy), the tracing backend of e2e/cluster/jaeger.yaml

Each image holds exactly the shared libraries its programs load, runs as a non-root user and is
cached under $PALLAS_CACHE/images by a hash of its inputs.

    e2e/cluster/tool-images.py --out DIR [--server-everything VERSION] [--jaeger BINARY]

prints one line per image: TAG PATH SIZE built|cached SECONDS
"""
import argparse
import glob
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "images"))
import imagelib  # noqa: E402

USER = 65532
# what a Job needs of the standard library (tests, GUI, build and packaging tools left out)
PYTHON_SKIP = {"test", "idlelib", "tkinter", "turtledemo", "ensurepip", "lib2to3", "distutils",
               "site-packages"}


def digest(*paths):
    """A hash of files' contents (directories: every file under them, with their names)."""
    h = hashlib.sha256()
    for path in paths:
        files = [path] if os.path.isfile(path) else sorted(
            os.path.join(d, f) for d, _, names in os.walk(path) for f in names)
        for f in files:
            h.update(os.path.relpath(f, path).encode())
            if not os.path.islink(f):
                with open(f, "rb") as content:
                    h.update(content.read())
    return h.hexdigest()[:16]


def python_image():
    """The e2e venv's interpreter and packages (e2e/setup.sh makes it) and Daedalus' scripts."""
    venv = os.path.join(ROOT, "e2e", ".work", "venv")
    subprocess.run([os.path.join(ROOT, "e2e", "setup.sh")], check=True, stdout=subprocess.DEVNULL)
    minor, prefix = subprocess.run(
        [os.path.join(venv, "bin", "python"), "-c",
         "import sys; print(f'{sys.version_info[0]}.{sys.version_info[1]}', sys.base_prefix)"],
        check=True, capture_output=True, text=True).stdout.split()
    lib = f"lib/python{minor}"
    python = os.path.join(prefix, "bin", f"python{minor}")
    scripts = os.path.join(ROOT, "e2e", "python")

    def skip(relative):
        top = relative.split(os.sep)[0]
        return top in PYTHON_SKIP or top.startswith("config-")

    def fill(layer):
        layer.tree("/usr/local/python/" + lib, os.path.join(prefix, lib), skip)
        layer.tree("/usr/local/python/" + lib + "/site-packages",
                   os.path.join(venv, lib, "site-packages"),
                   lambda r: r.split(os.sep)[0].split("-")[0] in ("pip", "setuptools", "_pytest",
                                                                   "pytest"))
        # libpython comes with the libraries, at the path the interpreter's RPATH names
        layer.file("/usr/local/python/bin/python3", python)
        for name in ("daedalus.py", "daedalus_job.py"):
            layer.file("/app/" + name, os.path.join(scripts, name))

    config = {"Entrypoint": ["/usr/local/python/bin/python3", "/app/daedalus_job.py"],
              "Env": ["PATH=/usr/local/python/bin:/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE=1",
                      "PYTHONUNBUFFERED=1", "LANG=C.UTF-8"],
              "WorkingDir": "/app"}
    inputs = [python, os.path.join(venv, "pyvenv.cfg"),
              os.path.join(ROOT, "e2e", "requirements.txt"), scripts]
    return config, inputs, fill


def everything_image(version):
    """Node.js and server-everything, installed once with npm into the cache."""
    prefix = os.path.join(cache(), "npm", f"server-everything-{version}")
    entry = "node_modules/@modelcontextprotocol/server-everything/dist/index.js"
    if not os.path.exists(os.path.join(prefix, entry)):
        subprocess.run(["npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix", prefix,
                        f"@modelcontextprotocol/server-everything@{version}"],
                       check=True, stdout=subprocess.DEVNULL)
    node = os.path.realpath(shutil.which("node"))

    def fill(layer):
        layer.file("/usr/bin/node", node)
        layer.tree("/app/node_modules", os.path.join(prefix, "node_modules"))
        # as PID 1, node ignores SIGTERM unless it handles it: exit at once, as the kubelet expects
        layer.bytes("/app/exit-on-sigterm.js", b"process.on('SIGTERM', () => process.exit(0));\n")

    config = {"Entrypoint": ["/usr/bin/node", "--require", "/app/exit-on-sigterm.js",
                             "/app/" + entry, "streamableHttp"],
              "Env": ["PATH=/usr/bin:/bin", "PORT=3001", "NODE_ENV=production"],
              "ExposedPorts": {"3001/tcp": {}},
              "WorkingDir": "/app"}
    return config, [node, prefix], fill


def go_image(name, workdir=None, binary=None):
    """One Go binary (from the PATH unless given) at /bin/NAME, as the upstream images have it."""
    binary = os.path.realpath(binary or shutil.which(name) or sys.exit(
        f"tool-images: {name} is not on the PATH (tools/go-binaries.sh builds it)"))

    def fill(layer):
        layer.file("/bin/" + name, binary)
        if workdir:
            layer.dir(workdir, 0o777)

    config = {"Entrypoint": ["/bin/" + name], "Env": ["PATH=/bin:/usr/bin"]}
    if workdir:
        config["WorkingDir"] = workdir
    return config, [binary], fill


def postgres_image():
    """Debian's PostgreSQL server at the paths its binaries were built for, and pg-entrypoint.c
    compiled statically: initdb on an empty volume (the official image's environment: POSTGRES_USER,
    POSTGRES_PASSWORD or _FILE, POSTGRES_DB, PGDATA), then postgres as PID 1, stopped with SIGINT
    (fast shutdown) as the official image is, and running as its user, 999, or any other."""
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"))
    if not versions:
        sys.exit("tool-images: PostgreSQL is not installed (apt-get install postgresql)")
    home = os.path.dirname(os.path.dirname(versions[-1]))  # /usr/lib/postgresql/<major>
    major = os.path.basename(home)
    share = f"/usr/share/postgresql/{major}"
    entrypoint = os.path.join(HERE, "pg-entrypoint.c")
    # names an arbitrary UID for initdb, as the official image does (pg-entrypoint.c)
    nss_wrapper = next(iter(glob.glob("/usr/lib/*/libnss_wrapper.so")), None) or sys.exit(
        "tool-images: nss_wrapper is not installed (apt-get install libnss-wrapper)")
    tmp = tempfile.mkdtemp(prefix="pg-entrypoint-")
    binary = os.path.join(tmp, "pg-entrypoint")
    subprocess.run(["gcc", "-static", "-Os", "-s", f'-DBIN="{home}/bin/"',
                    f'-DNSS_WRAPPER="{nss_wrapper}"', "-o", binary, entrypoint], check=True)

    def fill(layer):
        layer.file("/pg-entrypoint", binary)
        layer.file(nss_wrapper, nss_wrapper)
        # initdb runs `postgres -V` and its bootstrap through popen(3), that is /bin/sh
        layer.file("/bin/sh", "/bin/dash")
        for program in ("postgres", "initdb", "pg_isready"):
            layer.file(f"{home}/bin/{program}", f"{home}/bin/{program}")
        # without the JIT: it alone would bring LLVM and Z3 (130 MB); jit=off is the default
        layer.tree(f"{home}/lib", f"{home}/lib",
                   lambda r: r.startswith("llvmjit") or r.startswith("bitcode"))
        layer.tree(share, share)
        layer.tree("/usr/share/zoneinfo", "/usr/share/zoneinfo")
        layer.dir("/var/lib/postgresql/data", 0o777)

    config = {"Entrypoint": ["/pg-entrypoint"],
              "Env": [f"PATH={home}/bin:/usr/bin:/bin", "PGDATA=/var/lib/postgresql/data/pgdata",
                      "LANG=C.UTF-8"],
              "ExposedPorts": {"5432/tcp": {}},
              "StopSignal": "SIGINT"}
    return config, [entrypoint, nss_wrapper, "/bin/dash", f"{home}/bin/postgres", f"{home}/lib",
                    share], fill


def module_version(name, module):
    """The version of module a Go binary on the PATH was built from (`go version -m`)."""
    go = shutil.which("go") or "/usr/local/go/bin/go"
    out = subprocess.run([go, "version", "-m", shutil.which(name)], check=True,
                         capture_output=True, text=True).stdout
    return next(line.split()[2] for line in out.splitlines()
                if line.split()[:2] in (["dep", module], ["mod", module]))


def prometheus_release(module_version):
    """Prometheus 3's Go module versions are v0.3MM.P for release v3.MM.P."""
    m = re.fullmatch(r"v0\.(\d)(\d\d)\.(\d+)", module_version)
    return f"v{m[1]}.{int(m[2])}.{m[3]}" if m else module_version


def cache():
    return os.path.join(os.environ.get("PALLAS_CACHE", os.path.expanduser("~/.cache/pallas")),
                        "images")


def build(tag, image, out, user=(USER, "nonroot")):
    """The image at out/<name>.tar, from the cache when its inputs have not changed. image is
    (config, the files it is made of, a function writing them into a layer); user is the uid and
    name it runs as."""
    began = time.monotonic()
    config, inputs, fill = image
    key = digest(__file__, imagelib.__file__, *inputs) + f"-{user[0]}"
    name = tag.split(":")[0]
    cached = os.path.join(cache(), f"{name}-{key}.tar")
    state = "cached"
    if not os.path.exists(cached):
        layer = imagelib.Layer()
        layer.users(*user)
        fill(layer)
        data = layer.close()
        libs = imagelib.Layer()
        with tempfile.TemporaryDirectory() as root:
            # the libraries every ELF file of the image loads (the layer unpacked to find them)
            subprocess.run(["tar", "-xf", "-", "-C", root], input=data, check=True)
            for lib in imagelib.linked_libraries(root):
                libs.file(lib, lib)
        config = dict(config, User=f"{user[0]}:{user[0]}",
                      Labels={"org.opencontainers.image.title": name})
        os.makedirs(cache(), exist_ok=True)
        imagelib.write_archive(cached, tag, [libs.close(), data], config,
                               "e2e/cluster/tool-images.py")
        state = "built"
    target = os.path.join(out, f"{name}.tar")
    shutil.copyfile(cached, target)
    print(f"{tag} {target} {os.path.getsize(target)} {state} {time.monotonic() - began:.1f}",
          flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="where the tarballs go")
    parser.add_argument("--server-everything", default="2026.8.31", help="its npm version")
    parser.add_argument("--jaeger", help="a Jaeger v2 binary: build its image too")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    build("pallas-daedalus:test", python_image(), args.out)
    build("pallas-mcp-everything:test", everything_image(args.server_everything), args.out)
    prometheus = prometheus_release(module_version("prometheus", "github.com/prometheus/prometheus"))
    build(f"prometheus:{prometheus}", go_image("prometheus", "/prometheus"), args.out)
    operator = module_version("prometheus-operator",
                              "github.com/prometheus-operator/prometheus-operator")
    build(f"prometheus-operator:{operator}", go_image("prometheus-operator"), args.out)
    build(f"prometheus-config-reloader:{operator}", go_image("prometheus-config-reloader"),
          args.out)
    # the official image's user, which the chart's StatefulSet runs as (runAsUser 999)
    build("pallas-postgres:test", postgres_image(), args.out, user=(999, "postgres"))
    if args.jaeger:
        build("pallas-jaeger:test", go_image("jaeger", binary=args.jaeger), args.out)


if __name__ == "__main__":
    main()
