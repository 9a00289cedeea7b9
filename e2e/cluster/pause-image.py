#!/usr/bin/env python3
"""Builds the pod sandbox ("pause") image as a docker-archive tarball, without a registry
(e2e/cluster/README.md): pause.c compiled statically, one layer holding /pause.

    e2e/cluster/pause-image.py OUT.tar TAG
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "images"))
import imagelib  # noqa: E402


def main():
    out, tag = sys.argv[1:3]
    with tempfile.TemporaryDirectory() as tmp:
        binary = os.path.join(tmp, "pause")
        subprocess.run(["gcc", "-static", "-Os", "-s", "-o", binary, os.path.join(HERE, "pause.c")],
                       check=True)
        layer = imagelib.Layer()
        layer.file("/pause", binary)
    imagelib.write_archive(out, tag, [layer.close()], {"Entrypoint": ["/pause"], "User": "65535:65535"},
                           "e2e/cluster/pause-image.py")


if __name__ == "__main__":
    main()
