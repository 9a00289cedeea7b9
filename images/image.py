#!/usr/bin/env python3
"""Reads and runs the docker-archive images this build makes, without a Docker engine
(docs/images.md). A run is what a container runtime does for a pod: the image's layers unpacked
into a root filesystem, the image's entrypoint, user, environment and working directory, a
private mount and PID namespace with /proc and /dev, and the host's network (loopback only).

    images/image.py config IMAGE.tar
        prints the image's config (JSON)
    images/image.py run IMAGE.tar [--file SRC:DEST]... [--env NAME=VALUE]... [--user UID[:GID]]
                    -- ARG...
        runs the entrypoint with ARGs until it exits or this process gets SIGTERM/SIGINT; --user
        is a pod's runAsUser (and runAsGroup), as OpenShift's restricted-v2 SCC assigns one
    images/image.py unreadable IMAGE.tar --user UID[:GID]
        lists what of the image that user cannot read (or, for /tmp and $HOME, write); exits 1 if
        anything
    images/image.py startup IMAGE.tar --manifest FILE --port PORT [--agent NAME] [--runs N]
                    [--env NAME=VALUE]...
        starts `serve -f FILE [--agent NAME]` N times and prints the seconds from the command line
        to /readyz answering 200 (median, min, max; JSON)

Running needs root (chroot and mount namespaces), as a container runtime does.
"""
import argparse
import io
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.request


def read_archive(path):
    """(manifest, config, [layer bytes]) of a docker-archive tarball."""
    with tarfile.open(path) as tar:
        manifest = json.load(tar.extractfile("manifest.json"))[0]
        config = json.load(tar.extractfile(manifest["Config"]))
        layers = [tar.extractfile(name).read() for name in manifest["Layers"]]
    return manifest, config, layers


def layer_filter(member, path):
    """tarfile's "tar" filter (nothing outside root, no device files), keeping the layer's modes
    as a container runtime does: that filter drops group and other write bits, and so the
    world-writable /tmp every image here has."""
    safe = tarfile.tar_filter(member, path)
    return safe.replace(mode=member.mode, deep=False) if safe is not None else None


def unpack(layers, root):
    """Applies the layers in order, whiteouts included."""
    for data in layers:
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            for member in tar.getmembers():
                name = os.path.basename(member.name)
                if name.startswith(".wh."):
                    target = os.path.join(root, os.path.dirname(member.name), name[4:])
                    shutil.rmtree(target, ignore_errors=True)
            tar.extractall(root, filter=layer_filter)


def filesystem(layers):
    """{path: TarInfo} of the root filesystem the layers make, whiteouts applied, without unpacking
    it (the owners are the layers' numbers, not names looked up on this machine)."""
    files = {}
    for data in layers:
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            for member in tar.getmembers():
                path = os.path.normpath("/" + member.name)
                directory, name = os.path.split(path)
                if name == ".wh..wh..opq":  # the directory's lower content is gone
                    files = {p: m for p, m in files.items() if not p.startswith(directory + "/")}
                    continue
                if name.startswith(".wh."):  # name is gone, with all below it
                    gone = os.path.join(directory, name[4:])
                    files = {p: m for p, m in files.items()
                             if p != gone and not p.startswith(gone + "/")}
                    continue
                files[path] = member
    return files


def unreadable(files, uid, gid, home):
    """What uid, in group gid and no other, cannot use of the image: files it cannot read,
    directories it cannot list and enter, /tmp and home unless it may write there (home must be
    under /tmp, where pods mount their writable emptyDir)."""
    def may(member, bits):
        mode = member.mode
        shift = 6 if member.uid == uid else 3 if member.gid == gid else 0
        return (mode >> shift) & bits == bits

    problems = []
    for path, member in sorted(files.items()):
        if member.isdir() and not may(member, 5):
            problems.append(f"{path}: directory {member.mode:o} {member.uid}:{member.gid}, not"
                            " listable")
        elif member.isfile() and not may(member, 4):
            problems.append(f"{path}: file {member.mode:o} {member.uid}:{member.gid}, not readable")
    for path in sorted({"/tmp", home}):
        member = files.get(path)
        if member is None or not member.isdir() or not may(member, 3):
            problems.append(f"{path}: not a directory this user may write")
    if home != "/tmp" and not home.startswith("/tmp/"):
        problems.append(f"HOME={home}: not under /tmp")
    return problems


def free_port():
    """A free port on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def can_run():
    return os.geteuid() == 0 and shutil.which("unshare") is not None


def passwd_entry(passwd, uid):
    """(gid, home) of uid in an /etc/passwd's text, or None."""
    for line in passwd.splitlines():
        fields = line.split(":")
        if len(fields) >= 6 and fields[2] == str(uid):
            return fields[3], fields[5]
    return None


def identity(passwd, config, user=None):
    """(uid, gid, environment) a container runtime runs the image with, given its /etc/passwd's
    text: the image's User, or a pod's runAsUser[:runAsGroup]. Without a group, the user's own in
    /etc/passwd, else 0, as containerd and CRI-O do for a UID the image does not know (OpenShift's
    arbitrary UIDs run in group 0); HOME, unless the image sets it, is the user's home there, else
    / (runc)."""
    env = dict(e.split("=", 1) for e in config["config"].get("Env", []))
    uid, _, gid = (user or config["config"].get("User") or "0").partition(":")
    entry = passwd_entry(passwd, uid)
    if not gid:
        gid = entry[0] if entry else "0"
    env.setdefault("HOME", entry[1] if entry else "/")
    return int(uid), int(gid), env


def start(root, config, args, extra_env=None, output=None, user=None, cgroup=None):
    """The image's entrypoint with args, as its user (or user, UID[:GID]), in its root filesystem
    (a new session: signal the process group to stop it); output=subprocess.PIPE captures what it
    prints; with cgroup (a directory of the cgroup filesystem), it runs in that cgroup from its
    first byte, as a pod runs in its own, so that what it uses is counted there."""
    c = config["config"]
    try:
        with open(os.path.join(root, "etc", "passwd")) as f:
            passwd = f.read()
    except FileNotFoundError:
        passwd = ""
    uid, gid, env = identity(passwd, config, user)
    env.update(extra_env or {})
    workdir = c.get("WorkingDir") or "/"
    for d in ("proc", "dev"):
        os.makedirs(os.path.join(root, d), exist_ok=True)
    command = list(c.get("Entrypoint") or []) + list(args)
    mount, unshare = shutil.which("mount"), shutil.which("unshare")
    script = (
        f'{mount} -t proc proc "{root}/proc" && {mount} --rbind /dev "{root}/dev" && '
        f'exec {unshare} --root="{root}" --wd="{workdir}" --setgid={gid} --setuid={uid} -- '
        + " ".join("'" + a.replace("'", "'\\''") + "'" for a in command)
    )
    # the image's environment exactly (host commands are named by their full paths)

    def enter_cgroup():
        with open(os.path.join(cgroup, "cgroup.procs"), "w") as procs:
            procs.write(str(os.getpid()))

    return subprocess.Popen(
        [unshare, "--mount", "--pid", "--fork", "--kill-child=SIGTERM",
         shutil.which("sh"), "-c", script],
        env=env, stdout=output, stderr=subprocess.STDOUT if output else None,
        start_new_session=True, preexec_fn=enter_cgroup if cgroup else None)


def stop(process, timeout=60):
    try:
        os.killpg(process.pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    return process.wait(timeout=timeout)


def ready(url, deadline):
    """Seconds until url answers 200, polling every 5 ms; None at the deadline."""
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return True
        except OSError:
            pass
        time.sleep(0.005)
    return False


def rootfs(image, files):
    """A temporary directory holding the image's root filesystem and the given files."""
    work = tempfile.mkdtemp(prefix="pallas-image-")
    root = os.path.join(work, "root")
    os.makedirs(root)
    unpack(read_archive(image)[2], root)
    for spec in files:
        source, dest = spec.split(":", 1)
        target = os.path.join(root, dest.lstrip("/"))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(source, target)
        os.chmod(target, 0o644)
    return work, root


def env_pairs(values):
    return dict(v.split("=", 1) for v in values or [])


def command_run(args):
    config = read_archive(args.image)[1]
    work, root = rootfs(args.image, args.file or [])
    process = start(root, config, args.args, env_pairs(args.env), user=args.user)

    def forward(signum, _frame):
        try:
            os.killpg(process.pid, signum)
        except ProcessLookupError:
            pass

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    try:
        code = process.wait()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(code)


def command_unreadable(args):
    _, config, layers = read_archive(args.image)
    files = filesystem(layers)
    passwd = ""
    for data in layers:  # the last layer's /etc/passwd is the image's
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            member = next((m for m in tar.getmembers()
                           if os.path.normpath("/" + m.name) == "/etc/passwd"), None)
            if member is not None:
                passwd = tar.extractfile(member).read().decode()
    uid, gid, env = identity(passwd, config, args.user)
    problems = unreadable(files, uid, gid, env["HOME"])
    if problems:
        print("\n".join(problems))
    sys.exit(1 if problems else 0)


def command_startup(args):
    config = read_archive(args.image)[1]
    work, root = rootfs(args.image, [f"{args.manifest}:/tmp/startup/deployment.yaml"])
    times = []
    try:
        for _ in range(args.runs):
            began = time.monotonic()
            command = ["serve", "-f", "/tmp/startup/deployment.yaml"]
            command += ["--agent", args.agent] if args.agent else []
            process = start(root, config, command, env_pairs(args.env), subprocess.DEVNULL)
            ok = ready(f"http://127.0.0.1:{args.port}/readyz", began + 60)
            elapsed = time.monotonic() - began
            stop(process)
            if not ok:
                sys.exit("startup: no /readyz within 60 s")
            times.append(elapsed)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps({"runs": len(times), "median": statistics.median(times),
                      "min": min(times), "max": max(times)}))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    config = commands.add_parser("config")
    config.add_argument("image")
    run = commands.add_parser("run")
    run.add_argument("image")
    run.add_argument("--file", action="append", help="SRC:DEST copied into the root filesystem")
    run.add_argument("--env", action="append", help="NAME=VALUE added to the image's environment")
    run.add_argument("--user", help="UID[:GID] instead of the image's user (a pod's runAsUser)")
    check = commands.add_parser("unreadable")
    check.add_argument("image")
    check.add_argument("--user", required=True, help="UID[:GID]")
    startup = commands.add_parser("startup")
    startup.add_argument("image")
    startup.add_argument("--manifest", required=True)
    startup.add_argument("--port", type=int, required=True, help="a port /readyz answers on")
    startup.add_argument("--runs", type=int, default=5)
    startup.add_argument("--agent", help="serve only this agent, as its pod does")
    startup.add_argument("--env", action="append")
    # everything after "--" is the entrypoint's (argparse mishandles "--" after a subcommand)
    argv = sys.argv[1:]
    rest = argv[argv.index("--") + 1:] if "--" in argv else []
    args = parser.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    args.args = rest
    if args.command == "config":
        print(json.dumps(read_archive(args.image)[1], indent=2))
        return
    if args.command == "unreadable":
        command_unreadable(args)
    if not can_run():
        sys.exit(f"{args.command}: needs root and unshare (chroot, mount namespaces)")
    command_run(args) if args.command == "run" else command_startup(args)


if __name__ == "__main__":
    main()
