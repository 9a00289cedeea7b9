#!/usr/bin/env python3
"""Measures the two images (docs/images.md) and writes the "Images" section of docs/benchmarks.md:
their sizes (the tarball, and gzip-compressed layers as a registry stores them), the runtime
image's start to /readyz with and without its AOT cache, and the memory of an agent pod (the
working set of a memory cgroup of its own, as the kubelet counts it) with the image's JVM options,
with the options it had before issue 21 §4, and keeping its conversations in PostgreSQL (Debian's
`postgresql`, images/postgres.py), all from the image's own command line
(images/image.py), runs interleaved so that all see the same machine.

    benchmarks/images.sh [RUNS]      (builds the images first)
"""
import datetime
import gzip
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "images"))
from image import can_run, free_port, read_archive, ready, rootfs, start, stop  # noqa: E402
from postgres import Postgres  # noqa: E402

RUNTIME = os.path.join(ROOT, "agent-runtime", "target", "pallas-agent-runtime-image.tar")
OPERATOR = os.path.join(ROOT, "operator", "target", "pallas-operator-image.tar")
DOC = os.path.join(ROOT, "docs", "benchmarks.md")
BEGIN, END = "<!-- images benchmark -->", "<!-- end of images benchmark -->"
MIB = 1 << 20
# What the JVM makes of a pod's default 512 MiB memory limit (docs/operator.md), which it cannot
# see from here: heap sizes from MaxRAM, and the serial collector, which it picks by itself below
# 1792 MB of memory (checked in a 512 MiB memory cgroup: "Using Serial", an 8 MB initial heap).
POD_JVM = "-XX:MaxRAM=512m -XX:+UseSerialGC"
# The entrypoint's options that keep an agent pod's memory down (docs/images.md, "Memory"); the
# "former" runs leave them out.
MEMORY_OPTIONS = ("-XX:+UnlockDiagnosticVMOptions", "-XX:ArchiveRelocationMode=0",
                  "-XX:TrimNativeHeapInterval=5000")
CALLS = 20
IDLE_SECONDS = 10


class MemoryCgroup:
    """A memory cgroup of its own for one run (cgroup v1 or v2) with a pod's 512 MiB limit, and its
    working set as the kubelet computes it: usage less the inactive file pages."""

    def __init__(self, name):
        v1 = "/sys/fs/cgroup/memory"
        self.v1 = os.path.isdir(v1)
        self.path = os.path.join(v1 if self.v1 else "/sys/fs/cgroup", name)
        os.makedirs(self.path)
        self._write("memory.limit_in_bytes" if self.v1 else "memory.max", str(512 * MIB))

    def _write(self, name, value):
        with open(os.path.join(self.path, name), "w") as f:
            f.write(value)

    def working_set(self):
        with open(os.path.join(self.path, "memory.usage_in_bytes" if self.v1 else "memory.current")) as f:
            usage = int(f.read())
        with open(os.path.join(self.path, "memory.stat")) as f:
            stat = dict(line.split() for line in f)
        return usage - int(stat["total_inactive_file" if self.v1 else "inactive_file"])

    def remove(self):
        deadline = time.monotonic() + 10
        while True:
            try:
                os.rmdir(self.path)
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)


def send_messages(port, calls):
    """An MCP session on the agent and `calls` send_message calls, as a client's first minutes."""
    url = f"http://127.0.0.1:{port}/mcp"
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
               "MCP-Protocol-Version": "2025-06-18"}

    def post(message):
        request = urllib.request.Request(url, json.dumps(message).encode(), headers)
        with urllib.request.urlopen(request, timeout=10) as response:
            session = response.headers.get("Mcp-Session-Id")
            response.read()
            return session

    headers["Mcp-Session-Id"] = post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "images-benchmark", "version": "1"}}})
    post({"jsonrpc": "2.0", "method": "notifications/initialized"})
    for i in range(calls):
        post({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
              "params": {"name": "send_message", "arguments": {"message": f"call {i}"}}})


def sizes(path):
    """Bytes on disk unpacked, and as a registry stores it (gzip layers, as Jib writes them)."""
    _, config, layers = read_archive(path)
    packed = [layer if layer[:2] == b"\x1f\x8b" else gzip.compress(layer, 6) for layer in layers]
    unpacked = [len(gzip.decompress(p)) for p in packed]
    history = [h.get("created_by", "") for h in config.get("history", []) if not h.get("empty_layer")]
    return {
        "unpacked": sum(unpacked),
        "compressed": sum(len(p) for p in packed),
        "base": len(packed[0]),
        "aot": len(packed[-1]) if any("AOT" in h for h in history) else 0,
    }


def startup(runs):
    registry, port, probes = free_port(), free_port(), free_port()
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write(f"""apiVersion: pallas.helu.ca/v1alpha1
kind: PallasDeployment
metadata: {{name: bench}}
spec:
  registry: {{port: {registry}}}
  defaultModel: passthrough
  agents: [{{name: helper, port: {port}}}]
""")
        manifest = f.name
    config = read_archive(RUNTIME)[1]
    former = json.loads(json.dumps(config))
    entrypoint = former["config"]["Entrypoint"]
    missing = [o for o in MEMORY_OPTIONS if o not in entrypoint]
    if missing:
        sys.exit(f"images benchmark: the entrypoint lacks {missing}: update MEMORY_OPTIONS")
    former["config"]["Entrypoint"] = [a for a in entrypoint if a not in MEMORY_OPTIONS]
    work, root = rootfs(RUNTIME, [f"{manifest}:/etc/pallas/deployment.yaml"])
    times = {"with": [], "former": [], "without": [], "store": []}
    memory = {"with": [], "former": [], "store": []}
    # an agent pod's command line as the operator renders it (docs/operator.md), ready when the
    # kubelet's probe port says so
    args = ["serve", "-f", "/etc/pallas/deployment.yaml", "--agent", "helper", "--cluster",
            "--drain-timeout", "30", "--probe-port", str(probes)]
    # the same agent keeping its conversations in PostgreSQL (docs/runtime.md, "Conversations")
    store = Postgres.start()
    if store is None:
        sys.exit("images benchmark: needs Debian's postgresql for the runs with a store")
    modes = tuple(times)
    try:
        for i in range(runs * len(modes)):
            mode = modes[i % len(modes)]
            env = {"JAVA_TOOL_OPTIONS": POD_JVM + (" -XX:AOTMode=off" if mode == "without" else "")}
            if mode == "store":
                env.update(store.store_env())
            cgroup = MemoryCgroup(f"pallas-images-benchmark-{os.getpid()}-{i}")
            began = time.monotonic()
            process = start(root, former if mode == "former" else config, args,
                            env, subprocess.DEVNULL, cgroup=cgroup.path)
            ok = ready(f"http://127.0.0.1:{probes}/readyz", began + 60)
            elapsed = time.monotonic() - began
            if ok and mode in memory:
                at_ready = cgroup.working_set()
                send_messages(port, CALLS)
                time.sleep(IDLE_SECONDS)
                memory[mode].append((at_ready, cgroup.working_set()))
            stop(process)
            cgroup.remove()
            if not ok:
                sys.exit("images benchmark: no /readyz within 60 s")
            times[mode].append(elapsed)
    finally:
        store.close()
        subprocess.run(["rm", "-rf", work], check=False)
        os.unlink(manifest)
    return times, memory


def section(runtime, operator, times, memory, runs):
    with_aot = statistics.median(times["with"])
    without = statistics.median(times["without"])
    today = datetime.date.today().isoformat()
    cores = os.cpu_count()
    rows = [
        f"| pallas-agent-runtime: compressed (of which base, AOT cache) / unpacked | "
        f"{runtime['compressed'] / MIB:.0f} MiB ({runtime['base'] / MIB:.0f}, "
        f"{runtime['aot'] / MIB:.0f}) / {runtime['unpacked'] / MIB:.0f} MiB | — |",
        f"| pallas-operator: compressed (of which base) / unpacked | "
        f"{operator['compressed'] / MIB:.0f} MiB ({operator['base'] / MIB:.0f}) / "
        f"{operator['unpacked'] / MIB:.0f} MiB | — |",
        f"| agent pod start to /readyz, with the AOT cache (median of {runs}) | "
        f"{with_aot * 1000:.0f} ms ({', '.join(f'{t * 1000:.0f}' for t in times['with'])}) | <= 600 ms |",
        f"| the same without it (-XX:AOTMode=off, median of {runs}) | "
        f"{without * 1000:.0f} ms ({', '.join(f'{t * 1000:.0f}' for t in times['without'])}) | — |",
        f"| speed-up from the AOT cache | {without / with_aot:.2f}x | about 2x |",
        f"| the same with the JVM options before issue 21 §4 (median of {runs}) | "
        f"{statistics.median(times['former']) * 1000:.0f} ms "
        f"({', '.join(f'{t * 1000:.0f}' for t in times['former'])}) | unchanged |",
        f"| agent pod working set at ready / after {CALLS} calls and {IDLE_SECONDS} s (median of "
        f"{runs}) | {mib(memory['with'], 0)} / {mib(memory['with'], 1)} MiB | after the calls "
        "<= 64 MiB |",
        f"| the same with the JVM options before issue 21 §4 | {mib(memory['former'], 0)} / "
        f"{mib(memory['former'], 1)} MiB | — |",
        f"| the same with a conversation store (PostgreSQL) | {mib(memory['store'], 0)} / "
        f"{mib(memory['store'], 1)} MiB | after the calls <= 64 MiB |",
        f"| start to /readyz with a conversation store (median of {runs}) | "
        f"{statistics.median(times['store']) * 1000:.0f} ms | — |",
    ]
    return "\n".join([
        BEGIN, "", "## Images", "",
        f"Measured by `benchmarks/images.sh` on {today}: {cores} cores; each image's entrypoint run "
        "by `images/image.py` as a container runtime would (its root filesystem, user and "
        f"environment; `{POD_JVM}` standing in for the pod's 512 MiB memory limit), the agent "
        "pod's command line as the operator renders it for a one-agent manifest on the passthrough "
        "model, timed from the command line to the first 200 from `/readyz` on the probe port, "
        "each run in a memory cgroup of its own limited to 512 MiB, whose working set (usage "
        "less inactive file pages, as the kubelet counts it) is read at ready and after "
        f"{CALLS} `send_message` calls and {IDLE_SECONDS} s; runs with the cache, with the JVM "
        "options before issue 21 §4 (the entrypoint without "
        f"`{' '.join(MEMORY_OPTIONS)}`), without the cache, and with the cache and a conversation "
        "store (Debian's PostgreSQL on the host, images/postgres.py) interleaved; the machine's load "
        "average (1 minute) "
        f"{times['load'][0]:.2f} before and {times['load'][1]:.2f} after, its own runs included "
        "(the figure grows with the load: see the analysis below).", "",
        "| measure | result | target |", "|---|---|---|", *rows, "", END])


def mib(samples, which):
    return f"{statistics.median(s[which] for s in samples) / MIB:.0f}"


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    if not can_run():
        sys.exit("images benchmark: needs root (images/image.py runs the image's entrypoint)")
    load_before = os.getloadavg()[0]
    times, memory = startup(runs)
    times["load"] = (load_before, os.getloadavg()[0])
    text = section(sizes(RUNTIME), sizes(OPERATOR), times, memory, runs)
    print(text)
    doc = open(DOC).read()
    if BEGIN in doc:
        doc = doc[:doc.index(BEGIN)] + text + doc[doc.index(END) + len(END):]
    else:
        doc = doc.rstrip("\n") + "\n\n" + text + "\n"
    with open(DOC, "w") as f:
        f.write(doc)


if __name__ == "__main__":
    main()
