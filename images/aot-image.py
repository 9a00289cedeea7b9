#!/usr/bin/env python3
"""Adds a JDK AOT cache to the agent-runtime image Jib built (docs/images.md).

A training run starts the image's own entrypoint, exactly as a pod would (the image's root
filesystem, its user, its environment: a chroot in a private mount and PID namespace), serves a
two-agent manifest, drives it through MCP (initialize, tools/list, send_message with an
agent-to-agent call, get_health), the registry and the probes, and stops it with SIGTERM. Where
Debian's PostgreSQL is installed (.ci/run installs it), the run keeps its conversations in a
throw-away one (images/postgres.py), so that the cache holds the conversation store's classes too
(the JDBC driver, the pool, the schema migrations): an agent pod with a store then maps them rather
than loading them into its own memory (docs/images.md, "Memory"). The JVM
writes the cache at exit (-XX:AOTCacheOutput, JDK 25). The cache goes into a new layer at
/app/aot/pallas.aot and the entrypoint gains -XX:AOTCache, so an agent pod starts with classes
already loaded and linked.

Training needs root (chroot, mount namespaces) and a JDK >= 25 in the image. Where either is
missing the image is written unchanged, with a message.

    images/aot-image.py --image target/jib-image.tar --out target/pallas-agent-runtime-image.tar
"""
import argparse
import hashlib
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from image import can_run, free_port, read_archive, start, unpack  # noqa: E402
from postgres import Postgres  # noqa: E402

AOT_PATH = "/app/aot/pallas.aot"
# Classes loaded and linked, without method profiles (JEP 515): replaying them makes C2 compile at
# startup, on the cores startup needs; without them an agent pod is ready about 11 % sooner (an
# interleaved A/B of the two caches, docs/benchmarks.md) and the JIT warms up as it would without
# a cache.
TRAINING_OPTIONS = ("-XX:AOTCacheOutput=/tmp/aot-training/pallas.aot "
                    "-XX:+UnlockDiagnosticVMOptions -XX:-AOTRecordTraining")


def log(message):
    print(f"aot-image: {message}", file=sys.stderr, flush=True)


def http(url, body=None, headers=None):
    request = urllib.request.Request(url, data=body, headers=headers or {})
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.status, dict(response.headers), response.read().decode()


def mcp(url, method, params, session=None, request_id=1):
    headers = {"Content-Type": "application/json",
               "Accept": "application/json, text/event-stream",
               "MCP-Protocol-Version": "2025-06-18"}
    if session:
        headers["Mcp-Session-Id"] = session
    message = {"jsonrpc": "2.0", "method": method, "params": params}
    if request_id is not None:
        message["id"] = request_id
    _, response_headers, text = http(url, json.dumps(message).encode(), headers)
    return response_headers.get("mcp-session-id") or response_headers.get("Mcp-Session-Id"), text


def workload(registry, helper, coordinator):
    deadline = time.time() + 120
    while time.time() < deadline:
        try:
            if http(f"http://127.0.0.1:{coordinator}/readyz")[0] == 200:
                break
        except OSError:
            time.sleep(0.1)
    for _ in range(3):
        for port in (helper, coordinator):
            url = f"http://127.0.0.1:{port}/mcp"
            session, _ = mcp(url, "initialize", {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "aot-training", "version": "1"}})
            mcp(url, "notifications/initialized", {}, session, None)
            mcp(url, "tools/list", {}, session, 2)
            mcp(url, "prompts/list", {}, session, 3)
            mcp(url, "tools/call", {"name": "get_health", "arguments": {}}, session, 4)
            message = ('***CALL_TOOL helper__helper {"message": "hi"}'
                       if port == coordinator else "hello")
            mcp(url, "tools/call", {"name": "send_message", "arguments": {"message": message},
                                    "_meta": {"progressToken": "t"}}, session, 5)
            http(f"http://127.0.0.1:{port}/metrics")
        http(f"http://127.0.0.1:{registry}/.well-known/mcp/server.json")


def train(config, layers):
    """Returns the AOT cache's bytes, or None when this machine cannot train."""
    if not can_run():
        log("not root (or no unshare): the image is written without an AOT cache")
        return None
    with tempfile.TemporaryDirectory() as work:
        root = os.path.join(work, "root")
        os.makedirs(root)
        unpack(layers, root)
        release = os.path.join(root, "opt", "java", "release")
        if os.path.exists(release) and 'JAVA_VERSION="2' in open(release).read():
            version = open(release).read().split('JAVA_VERSION="')[1].split(".")[0].split('"')[0]
            if int(version) < 25:
                log(f"the image's Java is {version}: AOT caches need 25; written without one")
                return None
        registry, helper, coordinator = free_port(), free_port(), free_port()
        train_dir = os.path.join(root, "tmp", "aot-training")
        os.makedirs(train_dir)
        with open(os.path.join(train_dir, "deployment.yaml"), "w") as f:
            f.write(f"""apiVersion: pallas.helu.ca/v1alpha1
kind: PallasDeployment
metadata: {{name: training}}
spec:
  registry: {{port: {registry}}}
  defaultModel: passthrough
  agents:
    - {{name: helper, port: {helper}}}
    - {{name: coordinator, port: {coordinator}, servers: [helper], instanceScope: connection}}
""")
        os.chmod(train_dir, 0o777)
        env = {"JAVA_TOOL_OPTIONS": TRAINING_OPTIONS}
        store = None
        try:
            store = Postgres.start()
            if store is None:
                log("no PostgreSQL here (Debian's postgresql): the cache holds no conversation"
                    " store's classes")
        except (OSError, RuntimeError, subprocess.CalledProcessError) as e:
            log(f"PostgreSQL did not start ({e}): the cache holds no conversation store's classes")
        if store is not None:
            env.update(store.store_env())
        try:
            process = start(root, config, ["serve", "-f", "/tmp/aot-training/deployment.yaml"],
                            env, subprocess.PIPE)
            try:
                workload(registry, helper, coordinator)
                failed = None
            except OSError as e:
                failed = e
            os.killpg(process.pid, signal.SIGTERM)
            output, _ = process.communicate(timeout=120)
        finally:
            if store is not None:
                store.close()
        if failed:
            log(f"the training run failed ({failed}):\n" + output.decode(errors="replace")[-3000:])
            raise SystemExit(1)
        cache = os.path.join(train_dir, "pallas.aot")
        if not os.path.exists(cache):
            log("training produced no cache:\n" + output.decode(errors="replace")[-3000:])
            raise SystemExit(1)
        with open(cache, "rb") as f:
            return f.read()


def write_with_cache(manifest, config, layers, cache, out):
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for d in ("app", "app/aot"):
            info = tarfile.TarInfo(d + "/")
            info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, 1
            tar.addfile(info)
        info = tarfile.TarInfo(AOT_PATH.lstrip("/"))
        info.size, info.mode, info.mtime = len(cache), 0o644, 1
        tar.addfile(info, io.BytesIO(cache))
    layer = buffer.getvalue()
    diff_id = "sha256:" + hashlib.sha256(layer).hexdigest()
    config = json.loads(json.dumps(config))
    entrypoint = config["config"]["Entrypoint"]
    config["config"]["Entrypoint"] = [entrypoint[0], f"-XX:AOTCache={AOT_PATH}"] + entrypoint[1:]
    config["rootfs"]["diff_ids"].append(diff_id)
    config.setdefault("history", []).append(
        {"created": "1970-01-01T00:00:01Z", "created_by": "images/aot-image.py: JDK AOT cache"})
    write(manifest, config, layers + [layer], out)


def write(manifest, config, layers, out):
    config_bytes = json.dumps(config).encode()
    config_name = hashlib.sha256(config_bytes).hexdigest() + ".json"
    names = []
    tmp = out + ".tmp"
    with tarfile.open(tmp, "w", format=tarfile.GNU_FORMAT) as tar:
        for data in layers:
            name = hashlib.sha256(data).hexdigest() + ".tar"
            names.append(name)
            info = tarfile.TarInfo(name)
            info.size, info.mtime = len(data), 1
            tar.addfile(info, io.BytesIO(data))
        info = tarfile.TarInfo(config_name)
        info.size, info.mtime = len(config_bytes), 1
        tar.addfile(info, io.BytesIO(config_bytes))
        data = json.dumps([{"Config": config_name, "RepoTags": manifest["RepoTags"],
                            "Layers": names}]).encode()
        info = tarfile.TarInfo("manifest.json")
        info.size, info.mtime = len(data), 1
        tar.addfile(info, io.BytesIO(data))
    os.replace(tmp, out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--image", required=True, help="the image Jib built (docker archive)")
    parser.add_argument("--out", required=True, help="the image with the cache")
    args = parser.parse_args()
    manifest, config, layers = read_archive(args.image)
    started = time.time()
    cache = train(config, layers)
    if cache is None:
        shutil.copyfile(args.image, args.out)
        return
    write_with_cache(manifest, config, layers, cache, args.out)
    log(f"AOT cache of {len(cache) // (1 << 20)} MiB trained in {time.time() - started:.0f} s")


if __name__ == "__main__":
    main()
