"""The MCP conformance suite's server scenarios that apply to any server (no fixed tool names)."""

import re
import subprocess
from pathlib import Path

import pytest

CONFORMANCE = (
    Path(__file__).resolve().parents[1]
    / ".work/conformance/node_modules/@modelcontextprotocol/conformance/dist/index.js"
)
SCENARIOS = [
    "server-initialize",
    "ping",
    "tools-list",
    "prompts-list",
    "server-sse-multiple-streams",
    "dns-rebinding-protection",
]


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_conformance_scenario(deployment, scenario):
    if not CONFORMANCE.exists():
        pytest.fail(f"{CONFORMANCE} is missing: run e2e/setup.sh")
    run = subprocess.run(
        ["node", str(CONFORMANCE), "server", "--url", deployment.mcp_url("coordinator"), "--scenario", scenario],
        capture_output=True,
        text=True,
        timeout=120,
    )
    output = run.stdout + run.stderr
    assert run.returncode == 0, output
    summary = re.search(r"Passed: (\d+)/(\d+), (\d+) failed, (\d+) warnings", output)
    assert summary, output
    passed, total, failed, warnings = map(int, summary.groups())
    assert total > 0 and passed == total and failed == 0 and warnings == 0, output
