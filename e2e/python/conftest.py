"""Starts `pallas-agent-runtime serve` on free ports for the e2e tests, as a user would."""

import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    """A free port below the ephemeral range, so no outbound connection takes it before serve binds it."""
    for _ in range(100):
        port = random.randint(20000, 32000)
        with socket.socket() as s:
            try:
                s.bind(("0.0.0.0", port))
                return port
            except OSError:
                continue
    raise RuntimeError("no free port in 20000-32000")


def jar() -> Path:
    path = Path(os.environ.get("PALLAS_JAR", ROOT / "agent-runtime/target/pallas-agent-runtime.jar"))
    if not path.exists():
        pytest.fail(f"{path} is missing: build it with ./mvnw -DskipTests package")
    return path


def wait_for(url: str, timeout: float = 60.0, process: subprocess.Popen | None = None) -> None:
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"the server exited with {process.returncode} before {url} answered")
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return
        except Exception as e:  # noqa: BLE001 - still starting
            last = e
        time.sleep(0.1)
    raise TimeoutError(f"{url} did not answer within {timeout}s: {last}")


class Deployment:
    def __init__(self, registry_port: int, ports: dict[str, int], process: subprocess.Popen, log: Path):
        self.registry_port = registry_port
        self.ports = ports
        self.process = process
        self.log = log

    @property
    def registry_url(self) -> str:
        return f"http://localhost:{self.registry_port}"

    def mcp_url(self, agent: str) -> str:
        return f"http://localhost:{self.ports[agent]}/mcp"


@pytest.fixture(scope="session")
def deployment():
    registry_port = free_port()
    ports = {"helper": free_port(), "coordinator": free_port(), "vision": free_port()}
    manifest = textwrap.dedent(
        f"""
        apiVersion: pallas.helu.ca/v1alpha1
        kind: PallasDeployment
        metadata: {{name: e2e}}
        spec:
          registry: {{port: {registry_port}, namespace: ca.helu.e2e}}
          defaultModel: passthrough
          agents:
            - name: helper
              title: Helper Agent
              description: Echoes every message
              port: {ports['helper']}
            - name: coordinator
              title: Coordinator Agent
              description: Delegates to the helper agent over MCP
              port: {ports['coordinator']}
              servers: [helper]
              instanceScope: connection
            - name: vision
              description: Rejects nothing visual
              port: {ports['vision']}
              instanceScope: request
        """
    )
    work = Path(tempfile.mkdtemp(prefix="pallas-e2e-"))
    (work / "deployment.yaml").write_text(manifest)
    log = work / "serve.log"
    with open(log, "w") as out:
        process = subprocess.Popen(
            [str(ROOT / "pallas"), "serve", "-f", str(work / "deployment.yaml")],
            cwd=work,
            env={**os.environ, "PALLAS_JAVA_OPTS": "-Xmx256m"},
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_for(f"http://localhost:{registry_port}/.well-known/mcp/server.json", process=process)
        for port in ports.values():
            wait_for(f"http://localhost:{port}/readyz", process=process)
        yield Deployment(registry_port, ports, process, log)
    except Exception:
        sys.stderr.write(log.read_text())
        raise
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
