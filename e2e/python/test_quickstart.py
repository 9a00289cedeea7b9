"""README's first command: serve examples/quickstart.yaml, as a user types it."""

import re
import signal
import sys
import subprocess
import time

import httpx
import pytest

import daedalus
from conftest import ROOT, jar, wait_for

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture(scope="module")
def quickstart():
    jar()  # built by the Maven build before these tests
    # README's first command, after its build step, exactly as written
    process = subprocess.Popen(
        ["./pallas", "serve", "-f", "examples/quickstart.yaml"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    banner = []
    deadline = time.monotonic() + 60
    while len(banner) < 4 and time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        if not line.startswith("{"):  # JSON log lines interleave with the banner
            banner.append(line.strip())
    yield process, banner
    if process.poll() is None:
        process.kill()


def test_prints_the_registry_and_agent_urls(quickstart):
    _, banner = quickstart
    assert banner[:3] == [
        "registry: http://localhost:24200/.well-known/mcp/server.json",
        "agent helper: http://localhost:24201/mcp",
        "agent coordinator: http://localhost:24202/mcp",
    ]
    assert re.fullmatch(r"ready \d+ ms after the JVM started", banner[3]), banner


async def test_the_quickstart_agents_answer(quickstart):
    wait_for("http://localhost:24202/readyz")
    entries = daedalus.fetch_registry("http://localhost:24200")
    assert [e["server"]["name"] for e in entries] == ["local.pallas.quickstart/helper", "local.pallas.quickstart/coordinator"]
    async with daedalus.session("http://localhost:24202/mcp") as s:
        result, progress = await daedalus.chat(s, "coordinator", '***CALL_TOOL helper__helper {"message": "hi"}')
        assert result.content[0].text == "hi"
        assert "helper/helper: completed" in [p["message"] for p in progress]


def readme_block(section: str, language: str) -> str:
    text = (ROOT / "README.md").read_text()
    after = text[text.index(section) :]
    start = after.index(f"```{language}\n") + len(f"```{language}\n")
    return after[start : after.index("```", start)]


def test_readme_try_it_commands_work(quickstart):
    wait_for("http://localhost:24202/readyz")
    for command in readme_block("## Try it", "bash").strip().splitlines():
        run = subprocess.run(["bash", "-o", "pipefail", "-c", command], capture_output=True, text=True, timeout=30)
        assert run.returncode == 0, (command, run.stderr)
        assert "pallas" in run.stdout, (command, run.stdout)


def test_readme_python_snippet_works(quickstart, tmp_path):
    script = tmp_path / "snippet.py"
    script.write_text(readme_block("with the official Python SDK", "python"))
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert '{"status":"ok"' in run.stdout, run.stdout
    assert "text='hi'" in run.stdout, run.stdout


def test_sigterm_stops_cleanly(quickstart):
    process, _ = quickstart
    process.send_signal(signal.SIGTERM)
    # the JVM reports a SIGTERM exit as 143 (128 + 15) once its shutdown hooks have drained the calls
    assert process.wait(timeout=40) in (0, 143)
    with pytest.raises(httpx.ConnectError):
        httpx.get("http://localhost:24200/.well-known/mcp/server.json")
