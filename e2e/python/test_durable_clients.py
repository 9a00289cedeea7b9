"""durable_clients.py, the harness of the real node's rollout test (issue 17 §5), against a local
serve: 20 clients hold conversations with a shared and a connection-scope agent, and every turn
each made is in its history, in order."""

import subprocess
import sys

import pytest

from conftest import ROOT


@pytest.mark.parametrize("agent", ["helper", "coordinator"])  # shared, connection
def test_every_turn_of_twenty_clients_is_in_their_histories(deployment, agent):
    run = subprocess.run(
        [sys.executable, str(ROOT / "e2e/python/durable_clients.py"),
         "--url", deployment.mcp_url(agent), "--agent", agent, "--clients", "20", "--turns", "5"],
        capture_output=True, text=True, timeout=300)
    print(run.stdout, run.stderr)
    lines = run.stdout.splitlines()
    assert "turns made 120" in lines  # 20 clients x (5 turns + the one after)
    assert "turns found 120" in lines
    assert "calls failed 0" in lines
    assert run.returncode == 0


def test_turns_relayed_from_agent_to_agent_are_in_the_callers_histories(deployment):
    """--via: the coordinator calls the shared helper with each turn's message; the answers are the
    helper's, the turns in the coordinator's (per session) histories, and the relayed messages do
    not pass for the turns of clients that call the helper directly (--prefix)."""
    run = subprocess.run(
        [sys.executable, str(ROOT / "e2e/python/durable_clients.py"),
         "--url", deployment.mcp_url("coordinator"), "--agent", "coordinator", "--clients", "5",
         "--turns", "3", "--via", "helper__helper", "--prefix", "relay"],
        capture_output=True, text=True, timeout=300)
    print(run.stdout, run.stderr)
    lines = run.stdout.splitlines()
    assert "sessions open 5" in lines
    assert "turns made 20" in lines
    assert "turns found 20" in lines
    assert "calls failed 0" in lines
    assert run.returncode == 0


def test_a_lost_turn_is_counted(deployment):
    """The harness can fail: a history that lacks a client's turns is reported. The request-scope
    agent keeps no history, so every turn made is missing from it."""
    run = subprocess.run(
        [sys.executable, str(ROOT / "e2e/python/durable_clients.py"),
         "--url", deployment.mcp_url("vision"), "--agent", "vision", "--clients", "2",
         "--turns", "1"],
        capture_output=True, text=True, timeout=120)
    lines = run.stdout.splitlines()
    assert "turns made 4" in lines
    assert "turns found 0" in lines
    assert "calls failed 2" in lines  # one history check per client
    assert run.returncode == 1
