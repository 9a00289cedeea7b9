"""The registry's MCP endpoint (issue 20 §4; docs/contract.md, "The registry's MCP endpoint"), with
the official Python and TypeScript MCP SDKs: a fleet of three agents calling two real MCP servers
from npm (server-everything, and server-memory served over Streamable HTTP by supergateway); find a
tool by intent, call it through the registry, subscribe to an agent's health there, break a server
and receive the update."""

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest
from mcp import types

import daedalus
from conftest import ROOT, free_port, wait_for
from npm_servers import everything_entry, memory_entries

pytestmark = pytest.mark.anyio

E2E = Path(__file__).resolve().parents[1]
NODE_MODULES = E2E / ".work/conformance/node_modules"


@pytest.fixture
def anyio_backend():
    return "asyncio"


class ToolFleet:
    def __init__(self, registry_port: int, memory: subprocess.Popen):
        self.registry_mcp = f"http://localhost:{registry_port}/mcp"
        self.memory = memory


def start(command: list[str], env: dict, log: Path) -> subprocess.Popen:
    with open(log, "w") as out:
        return subprocess.Popen(command, env={**os.environ, **env}, stdout=out, stderr=subprocess.STDOUT)


@pytest.fixture(scope="module")
def tool_fleet():
    work = Path(tempfile.mkdtemp(prefix="pallas-registry-e2e-"))
    everything_port, memory_port, registry_port = free_port(), free_port(), free_port()
    ports = {"planner": free_port(), "archivist": free_port(), "coordinator": free_port()}
    memory_entry, gateway_entry = memory_entries()
    processes = [
        start(["node", str(everything_entry()), "streamableHttp"], {"PORT": str(everything_port)}, work / "everything.log"),
        start(
            ["node", str(gateway_entry), "--stdio", f"node {memory_entry}", "--outputTransport", "streamableHttp",
             "--stateful", "--port", str(memory_port), "--streamableHttpPath", "/mcp"],
            {"MEMORY_FILE_PATH": str(work / "memory.jsonl")},
            work / "memory.log",
        ),
    ]
    (work / "deployment.yaml").write_text(textwrap.dedent(f"""
        apiVersion: pallas.helu.ca/v1alpha1
        kind: PallasDeployment
        metadata: {{name: tools}}
        spec:
          registry: {{port: {registry_port}, namespace: ca.helu.e2e}}
          defaultModel: passthrough
          mcpServers:
            - {{name: everything, url: "http://127.0.0.1:{everything_port}/mcp"}}
            - {{name: memory, url: "http://127.0.0.1:{memory_port}/mcp"}}
          agents:
            - {{name: planner, port: {ports['planner']}, description: Plans with the reference tools,
                servers: [everything]}}
            - {{name: archivist, port: {ports['archivist']}, description: Remembers facts in a knowledge graph,
                servers: [memory]}}
            - {{name: coordinator, port: {ports['coordinator']}, description: Hands work to the others,
                servers: [planner, archivist]}}
        """))
    serve = start([str(ROOT / "pallas"), "serve", "-f", str(work / "deployment.yaml")],
                  {"PALLAS_JAVA_OPTS": "-Xmx256m"}, work / "serve.log")
    processes.append(serve)
    try:
        wait_for(f"http://localhost:{registry_port}/readyz", process=serve)
        for port in ports.values():
            wait_for(f"http://localhost:{port}/readyz", process=serve)
        yield ToolFleet(registry_port, processes[1])
    except Exception:
        sys.stderr.write((work / "serve.log").read_text())
        raise
    finally:
        for p in reversed(processes):
            p.terminate()
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()


def structured(result) -> dict:
    assert not daedalus.is_error(result), result
    return result.structured_content


async def await_indexed(s, timeout: float = 60) -> list[dict]:
    """list_servers once every agent and server answers with its tools: a cold fleet on a busy
    machine may take longer than the registry's first question waits (10 s)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        servers = structured(await s.call_tool("list_servers", {}))["servers"]
        if len(servers) == 5 and all(x["status"] in ("ok", "up") and x["tools"] > 0 for x in servers):
            return servers
        assert asyncio.get_running_loop().time() < deadline, servers
        await asyncio.sleep(0.5)


async def test_a_tool_found_by_intent_across_the_fleet_is_called_through_the_registry(tool_fleet):
    async with daedalus.session(tool_fleet.registry_mcp) as s:
        servers = await await_indexed(s)
        assert [(x["kind"], x["name"]) for x in servers] == [
            ("agent", "planner"), ("agent", "archivist"), ("agent", "coordinator"),
            ("server", "everything"), ("server", "memory"),
        ]
        assert all(x["latencyMs"] > 0 for x in servers), servers
        found = structured(await s.call_tool("find_tools", {"queries": [
            "the sum of two numbers",
            "create entities in the knowledge graph",
            "remember facts",
        ]}))
        assert all(r["hits"] for r in found["results"]), found
        tops = [r["hits"][0]["name"] for r in found["results"]]
        assert tops[0] == "everything/get-sum", found
        assert tops[1] == "memory/create_entities", found
        assert tops[2] == "archivist/send_message" or tops[2].startswith("archivist/"), found

        schema = structured(await s.call_tool("get_schema", {"name": "memory/create_entities"}))
        assert "entities" in schema["tool"]["inputSchema"]["properties"]

        total = await s.call_tool("call_tool", {"name": "everything/get-sum", "arguments": {"a": 2, "b": 40}})
        assert not daedalus.is_error(total)
        assert "42" in total.content[0].text

        created = await s.call_tool("call_tool", {"name": "memory/create_entities", "arguments": {"entities": [
            {"name": "Pallas", "entityType": "project", "observations": ["serves agents over MCP"]}]}})
        assert not daedalus.is_error(created), created
        graph = await s.call_tool("call_tool", {"name": "memory/read_graph", "arguments": {}})
        assert "serves agents over MCP" in graph.content[0].text


async def test_python_and_typescript_subscribers_hear_of_a_broken_server(tool_fleet):
    uri = "pallas://agents/archivist/health"
    updated = asyncio.Event()

    async def on_message(message):
        if isinstance(message, types.ResourceUpdatedNotification) and message.params.uri == uri:
            updated.set()

    typescript = subprocess.Popen(
        ["node", str(E2E / "ts/registry_client.mjs"), "--modules", str(NODE_MODULES), "--url", tool_fleet.registry_mcp,
         "--intent", "the sum of two numbers", "--args", '{"a": 1, "b": 2}', "--watch", uri],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    try:
        lines = []
        for line in typescript.stdout:
            lines.append(line.rstrip())
            if line.startswith("subscribed:"):
                break
        assert lines[:3] == ["found: everything/get-sum", "answer: The sum of 1 and 2 is 3.", "subscribed: ok"], lines

        async with daedalus.session(tool_fleet.registry_mcp, message_handler=on_message) as s:
            resources = [r.uri for r in (await s.list_resources()).resources]
            assert uri in resources
            assert json.loads((await s.read_resource(uri)).contents[0].text)["status"] == "ok"
            await s.subscribe_resource(uri)

            tool_fleet.memory.kill()
            tool_fleet.memory.wait(timeout=10)
            # the agent sees it at its next probe (every 15 s): within 30 s with a margin
            await asyncio.wait_for(updated.wait(), timeout=30)
            health = json.loads((await s.read_resource(uri)).contents[0].text)
            assert health["status"] == "degraded", health
            assert health["message"].startswith("Unreachable: memory"), health

        rest, _ = typescript.communicate(timeout=60)
        lines += rest.splitlines()
        assert typescript.returncode == 0, lines
        update = json.loads(next(x for x in lines if x.startswith("updated: "))[len("updated: "):])
        assert update["status"] == "degraded", lines
    finally:
        if typescript.poll() is None:
            typescript.kill()
