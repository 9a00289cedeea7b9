#!/usr/bin/env python3
"""Builds the pod sandbox ("pause") image as a docker-archive tarball, without a registry
(e2e/cluster/README.md): pause.c compiled statically, one layer holding /pause.

    e2e/cluster/pause-image.py OUT.tar TAG
"""
import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile


def add(tar, name, data, mode=0o644):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = mode
    tar.addfile(info, io.BytesIO(data))


def main():
    out, tag = sys.argv[1:3]
    source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pause.c")
    with tempfile.TemporaryDirectory() as tmp:
        binary = os.path.join(tmp, "pause")
        subprocess.run(["gcc", "-static", "-Os", "-s", "-o", binary, source], check=True)
        with open(binary, "rb") as f:
            pause = f.read()
    layer = io.BytesIO()
    with tarfile.open(fileobj=layer, mode="w", format=tarfile.GNU_FORMAT) as tar:
        add(tar, "pause", pause, 0o755)
    layer = layer.getvalue()
    diff_id = hashlib.sha256(layer).hexdigest()
    config = json.dumps({
        "architecture": "amd64",
        "os": "linux",
        "created": "1970-01-01T00:00:00Z",
        "config": {"Entrypoint": ["/pause"], "User": "65535:65535"},
        "rootfs": {"type": "layers", "diff_ids": ["sha256:" + diff_id]},
        "history": [{"created": "1970-01-01T00:00:00Z", "created_by": "e2e/cluster/pause-image.py"}],
    }, sort_keys=True).encode()
    config_name = hashlib.sha256(config).hexdigest() + ".json"
    manifest = [{"Config": config_name, "RepoTags": [tag], "Layers": [diff_id + "/layer.tar"]}]
    with tarfile.open(out + ".tmp", "w", format=tarfile.GNU_FORMAT) as tar:
        add(tar, "manifest.json", json.dumps(manifest).encode())
        add(tar, config_name, config)
        add(tar, diff_id + "/layer.tar", layer)
    os.replace(out + ".tmp", out)


if __name__ == "__main__":
    main()
