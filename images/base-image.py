#!/usr/bin/env python3
"""Builds the base image of Pallas' images as a docker-archive tarball, without a registry or a
Docker engine (docs/images.md): a jlink'ed Java runtime from a local JDK, exactly the glibc
libraries it links, /etc/passwd with the non-root user 65532, and a writable /tmp. Jib takes it
as a tar:// base. The result is cached by content: a second build with the same JDK, modules and
script reuses it.

    images/base-image.py --jdk /usr/lib/jvm/temurin-25-jdk-amd64 --out target/base-image.tar
"""
import argparse
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile

MODULES = [
    # what jdeps finds in the runtime and operator jars, plus what they load by reflection
    "java.base", "java.compiler", "java.desktop", "java.logging", "java.management",
    "java.naming", "java.net.http", "java.security.jgss", "java.security.sasl", "java.sql",
    "java.xml", "jdk.crypto.ec", "jdk.httpserver", "jdk.management", "jdk.unsupported",
    "jdk.naming.dns", "jdk.zipfs",
]
USER = 65532
EPOCH = 0


def run(*cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def cache_key(jdk):
    h = hashlib.sha256()
    with open(os.path.join(jdk, "release"), "rb") as f:
        h.update(f.read())
    with open(__file__, "rb") as f:
        h.update(f.read())
    h.update(",".join(MODULES).encode())
    return h.hexdigest()[:16]


def linked_libraries(root):
    """Every shared library the ELF files under root load, by the path the loader finds."""
    libs = set()
    for dirpath, _, files in os.walk(root):
        for name in files:
            path = os.path.join(dirpath, name)
            if os.path.islink(path):
                continue
            with open(path, "rb") as f:
                if f.read(4) != b"\x7fELF":
                    continue
            out = subprocess.run(["ldd", path], capture_output=True, text=True).stdout
            for line in out.splitlines():
                m = re.search(r"(/\S+) \(0x", line)
                if m and not m.group(1).startswith(root):
                    libs.add(m.group(1))
    return sorted(libs)


def add_dir(tar, path, mode=0o755):
    info = tarfile.TarInfo(path.lstrip("/") + "/")
    info.type = tarfile.DIRTYPE
    info.mode = mode
    info.mtime = EPOCH
    tar.addfile(info)


def add_bytes(tar, path, data, mode=0o644):
    info = tarfile.TarInfo(path.lstrip("/"))
    info.size = len(data)
    info.mode = mode
    info.mtime = EPOCH
    tar.addfile(info, io.BytesIO(data))


def add_file(tar, path, source):
    """A regular file at path with source's content (symlinks are resolved)."""
    with open(os.path.realpath(source), "rb") as f:
        add_bytes(tar, path, f.read(), os.stat(source).st_mode & 0o777)


def layer(jre, libs):
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.GNU_FORMAT) as tar:
        dirs = {"/etc", "/tmp", "/opt", "/home", f"/home/nonroot"}
        for lib in libs:
            d = os.path.dirname(lib)
            while d != "/":
                dirs.add(d)
                d = os.path.dirname(d)
        for dirpath, dirnames, _ in os.walk(jre):
            dirs.add("/opt/java" + dirpath[len(jre):])
        for d in sorted(dirs):
            add_dir(tar, d, 0o1777 if d == "/tmp" else 0o755)
        add_bytes(tar, "/etc/passwd",
                  f"root:x:0:0:root:/root:/sbin/nologin\n"
                  f"nonroot:x:{USER}:{USER}:nonroot:/home/nonroot:/sbin/nologin\n".encode())
        add_bytes(tar, "/etc/group", f"root:x:0:\nnonroot:x:{USER}:\n".encode())
        add_bytes(tar, "/etc/nsswitch.conf", b"hosts: files dns\npasswd: files\ngroup: files\n")
        for lib in libs:
            add_file(tar, lib, lib)
        for dirpath, _, files in sorted(os.walk(jre)):
            for name in sorted(files):
                source = os.path.join(dirpath, name)
                add_file(tar, "/opt/java" + source[len(jre):], source)
    return buffer.getvalue()


def archive(layer_bytes, key, out):
    diff_id = "sha256:" + hashlib.sha256(layer_bytes).hexdigest()
    config = {
        "architecture": "amd64",
        "os": "linux",
        "created": "1970-01-01T00:00:00Z",
        "config": {
            "Env": ["PATH=/opt/java/bin:/usr/bin:/bin", "JAVA_HOME=/opt/java", "LANG=C.UTF-8"],
            "User": f"{USER}:{USER}",
            "WorkingDir": "/home/nonroot",
            "Labels": {"org.opencontainers.image.title": "pallas-base",
                       "org.opencontainers.image.description": "jlink'ed Java runtime on glibc"},
        },
        "rootfs": {"type": "layers", "diff_ids": [diff_id]},
        "history": [{"created": "1970-01-01T00:00:00Z", "created_by": "images/base-image.py"}],
    }
    config_bytes = json.dumps(config, sort_keys=True).encode()
    config_name = hashlib.sha256(config_bytes).hexdigest() + ".json"
    layer_name = diff_id[len("sha256:"):] + "/layer.tar"
    manifest = [{"Config": config_name, "RepoTags": [f"pallas-base:{key}"], "Layers": [layer_name]}]
    tmp = out + ".tmp"
    with tarfile.open(tmp, "w", format=tarfile.GNU_FORMAT) as tar:
        add_bytes(tar, "manifest.json", json.dumps(manifest).encode())
        add_bytes(tar, config_name, config_bytes)
        add_bytes(tar, layer_name, layer_bytes)
    os.replace(tmp, out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jdk", required=True, help="a JDK with jlink")
    parser.add_argument("--out", required=True, help="where the tarball goes")
    parser.add_argument("--cache", default=os.path.join(
        os.environ.get("PALLAS_CACHE", os.path.expanduser("~/.cache/pallas")), "images"))
    args = parser.parse_args()
    key = cache_key(args.jdk)
    cached = os.path.join(args.cache, f"base-{key}.tar")
    if not os.path.exists(cached):
        os.makedirs(args.cache, exist_ok=True)
        with tempfile.TemporaryDirectory() as work:
            jre = os.path.join(work, "jre")
            run(os.path.join(args.jdk, "bin", "jlink"), "--add-modules", ",".join(MODULES),
                "--strip-debug", "--no-man-pages", "--no-header-files", "--compress=zip-6",
                "--output", jre)
            # headless: the X11 and sound bindings of java.desktop would pull X11 libraries in
            for name in ("libawt_xawt.so", "libjsound.so", "libsplashscreen.so"):
                lib = os.path.join(jre, "lib", name)
                if os.path.exists(lib):
                    os.remove(lib)
            # the JDK's default CDS archive comes with jlink; regenerate it for this runtime
            run(os.path.join(jre, "bin", "java"), "-Xshare:dump")
            archive(layer(jre, linked_libraries(jre)), key, cached)
        print(f"base-image: built {cached}", file=sys.stderr)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    shutil.copyfile(cached, args.out)


if __name__ == "__main__":
    main()
