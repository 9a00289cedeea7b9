"""What the image scripts share: layers as tar bytes, the libraries ELF files load, and
docker-archive tarballs (docs/images.md). Every entry has mtime 0, so the same inputs give the
same bytes."""
import hashlib
import io
import json
import os
import re
import subprocess
import tarfile


def linked_libraries(root):
    """Every shared library the ELF files under root (a directory or one file) load, by the path
    the loader finds them at."""
    paths = [root] if os.path.isfile(root) else [
        os.path.join(d, name) for d, _, files in os.walk(root) for name in files]
    libs = set()
    for path in paths:
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


class Layer:
    """A layer being written: directories are added for every path's parents."""

    def __init__(self):
        self.buffer = io.BytesIO()
        self.tar = tarfile.open(fileobj=self.buffer, mode="w", format=tarfile.GNU_FORMAT)
        self.dirs = set()

    def dir(self, path, mode=0o755):
        path = path.rstrip("/")
        if not path or path in self.dirs:
            return
        self.dir(os.path.dirname(path))
        self.dirs.add(path)
        info = tarfile.TarInfo(path.lstrip("/") + "/")
        info.type = tarfile.DIRTYPE
        info.mode = mode
        self.tar.addfile(info)

    def bytes(self, path, data, mode=0o644):
        self.dir(os.path.dirname(path))
        info = tarfile.TarInfo(path.lstrip("/"))
        info.size = len(data)
        info.mode = mode
        self.tar.addfile(info, io.BytesIO(data))

    def file(self, path, source):
        """A regular file at path with source's content and mode (symlinks are resolved)."""
        with open(os.path.realpath(source), "rb") as f:
            self.bytes(path, f.read(), os.stat(source).st_mode & 0o777)

    def tree(self, path, source, skip=lambda relative: False):
        """source's files under path, in a stable order; skip(relative path) leaves one out."""
        for dirpath, dirnames, files in os.walk(source):
            relative = os.path.relpath(dirpath, source)
            dirnames[:] = sorted(d for d in dirnames if not skip(os.path.normpath(
                os.path.join(relative, d))))
            self.dir(os.path.normpath(os.path.join(path, relative)))
            for name in sorted(files):
                if not skip(os.path.normpath(os.path.join(relative, name))):
                    self.file(os.path.normpath(os.path.join(path, relative, name)),
                              os.path.join(dirpath, name))

    def users(self, uid, name):
        """/etc/passwd and /etc/group with root and one non-root user, and nsswitch.conf."""
        self.bytes("/etc/passwd", f"root:x:0:0:root:/root:/sbin/nologin\n"
                   f"{name}:x:{uid}:{uid}:{name}:/home/{name}:/sbin/nologin\n".encode())
        self.bytes("/etc/group", f"root:x:0:\n{name}:x:{uid}:\n".encode())
        self.bytes("/etc/nsswitch.conf", b"hosts: files dns\npasswd: files\ngroup: files\n")
        self.dir("/tmp", 0o1777)

    def close(self):
        self.tar.close()
        return self.buffer.getvalue()


def write_archive(out, tag, layers, config, created_by):
    """A docker-archive tarball at out (written atomically) holding the layers (tar bytes) with
    config's "config" part (Env, Entrypoint, User, ...)."""
    diff_ids = ["sha256:" + hashlib.sha256(data).hexdigest() for data in layers]
    config_bytes = json.dumps({
        "architecture": "amd64",
        "os": "linux",
        "created": "1970-01-01T00:00:00Z",
        "config": config,
        "rootfs": {"type": "layers", "diff_ids": diff_ids},
        "history": [{"created": "1970-01-01T00:00:00Z", "created_by": created_by}
                    for _ in layers],
    }, sort_keys=True).encode()
    config_name = hashlib.sha256(config_bytes).hexdigest() + ".json"
    names = [d[len("sha256:"):] + "/layer.tar" for d in diff_ids]
    manifest = [{"Config": config_name, "RepoTags": [tag], "Layers": names}]
    tmp = out + ".tmp"
    with tarfile.open(tmp, "w", format=tarfile.GNU_FORMAT) as tar:
        for name, data in [("manifest.json", json.dumps(manifest).encode()),
                           (config_name, config_bytes)] + list(zip(names, layers)):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    os.replace(tmp, out)
