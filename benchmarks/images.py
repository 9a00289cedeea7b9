#!/usr/bin/env python3
"""Measures the two images (docs/images.md) and writes the "Images" section of docs/benchmarks.md:
their sizes (the tarball, and gzip-compressed layers as a registry stores them) and the runtime
image's start to /readyz with and without its AOT cache, both from the image's own command line
(images/image.py), runs interleaved so that both see the same machine.

    benchmarks/images.sh [RUNS]      (builds the images first)
"""
import datetime
import gzip
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "images"))
from image import can_run, free_port, read_archive, ready, rootfs, start, stop  # noqa: E402

RUNTIME = os.path.join(ROOT, "agent-runtime", "target", "pallas-agent-runtime-image.tar")
OPERATOR = os.path.join(ROOT, "operator", "target", "pallas-operator-image.tar")
DOC = os.path.join(ROOT, "docs", "benchmarks.md")
BEGIN, END = "<!-- images benchmark -->", "<!-- end of images benchmark -->"
MIB = 1 << 20
# What the JVM makes of a pod's default 512 MiB memory limit (docs/operator.md), which it cannot
# see from here: heap sizes from MaxRAM, and the serial collector, which it picks by itself below
# 1792 MB of memory (checked in a 512 MiB memory cgroup: "Using Serial", an 8 MB initial heap).
POD_JVM = "-XX:MaxRAM=512m -XX:+UseSerialGC"


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
    work, root = rootfs(RUNTIME, [f"{manifest}:/etc/pallas/deployment.yaml"])
    times = {"with": [], "without": []}
    # an agent pod's command line as the operator renders it (docs/operator.md), ready when the
    # kubelet's probe port says so
    args = ["serve", "-f", "/etc/pallas/deployment.yaml", "--agent", "helper", "--cluster",
            "--drain-timeout", "30", "--probe-port", str(probes)]
    try:
        for i in range(runs * 2):
            mode = "with" if i % 2 == 0 else "without"
            options = POD_JVM + ("" if mode == "with" else " -XX:AOTMode=off")
            began = time.monotonic()
            process = start(root, config, args, {"JAVA_TOOL_OPTIONS": options}, subprocess.DEVNULL)
            ok = ready(f"http://127.0.0.1:{probes}/readyz", began + 60)
            elapsed = time.monotonic() - began
            stop(process)
            if not ok:
                sys.exit("images benchmark: no /readyz within 60 s")
            times[mode].append(elapsed)
    finally:
        subprocess.run(["rm", "-rf", work], check=False)
        os.unlink(manifest)
    return times


def section(runtime, operator, times, runs):
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
    ]
    return "\n".join([
        BEGIN, "", "## Images", "",
        f"Measured by `benchmarks/images.sh` on {today}: {cores} cores; each image's entrypoint run "
        "by `images/image.py` as a container runtime would (its root filesystem, user and "
        f"environment; `{POD_JVM}` standing in for the pod's 512 MiB memory limit), the agent "
        "pod's command line as the operator renders it for a one-agent manifest on the passthrough "
        "model, timed from the command line to the first 200 from `/readyz` on the probe port; "
        "runs with and without the cache interleaved; the machine's load average (1 minute) "
        f"{times['load'][0]:.2f} before and {times['load'][1]:.2f} after, its own runs included "
        "(the figure grows with the load: see the analysis below).", "",
        "| measure | result | target |", "|---|---|---|", *rows, "", END])


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    if not can_run():
        sys.exit("images benchmark: needs root (images/image.py runs the image's entrypoint)")
    load_before = os.getloadavg()[0]
    times = startup(runs)
    times["load"] = (load_before, os.getloadavg()[0])
    text = section(sizes(RUNTIME), sizes(OPERATOR), times, runs)
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
