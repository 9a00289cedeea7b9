#!/usr/bin/env python3
"""Builds the base image of Pallas' images as a docker-archive tarball, without a registry or a
Docker engine (docs/images.md): a jlink'ed Java runtime from a local JDK, exactly the glibc
libraries it links, /etc/passwd with the non-root user 65532, and a writable /tmp, which is also
HOME: any user can run it, as OpenShift runs an image with an arbitrary UID in group 0 and pods
mount an emptyDir on /tmp. Jib takes it as a tar:// base. The result is cached by content: a
second build with the same JDK, modules and script reuses it.

    images/base-image.py --jdk /usr/lib/jvm/temurin-25-jdk-amd64 --out target/base-image.tar
"""
import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import imagelib  # noqa: E402

MODULES = [
    # what jdeps finds in the runtime and operator jars, plus what they load by reflection
    "java.base", "java.compiler", "java.desktop", "java.logging", "java.management",
    "java.naming", "java.net.http", "java.security.jgss", "java.security.sasl", "java.sql",
    "java.xml", "jdk.crypto.ec", "jdk.httpserver", "jdk.management", "jdk.unsupported",
    "jdk.naming.dns", "jdk.zipfs",
]
USER = 65532


def run(*cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def cache_key(jdk):
    h = hashlib.sha256()
    with open(os.path.join(jdk, "release"), "rb") as f:
        h.update(f.read())
    for script in (__file__, imagelib.__file__):
        with open(script, "rb") as f:
            h.update(f.read())
    h.update(",".join(MODULES).encode())
    return h.hexdigest()[:16]


def layer(jre):
    out = imagelib.Layer()
    out.users(USER, "nonroot")
    out.dir("/home/nonroot")
    for lib in imagelib.linked_libraries(jre):
        out.file(lib, lib)
    out.tree("/opt/java", jre)
    return out.close()


def archive(layer_bytes, key, out):
    imagelib.write_archive(out, f"pallas-base:{key}", [layer_bytes], {
        # HOME on the pods' writable emptyDir, whatever the user (OpenShift: docs/install.md)
        "Env": ["PATH=/opt/java/bin:/usr/bin:/bin", "JAVA_HOME=/opt/java", "LANG=C.UTF-8",
                "HOME=/tmp"],
        "User": f"{USER}:{USER}",
        "WorkingDir": "/home/nonroot",
        "Labels": {"org.opencontainers.image.title": "pallas-base",
                   "org.opencontainers.image.description": "jlink'ed Java runtime on glibc"},
    }, "images/base-image.py")


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
            archive(layer(jre), key, cached)
        print(f"base-image: built {cached}", file=sys.stderr)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    shutil.copyfile(cached, args.out)


if __name__ == "__main__":
    main()
