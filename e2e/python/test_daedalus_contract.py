"""Seed 000's contract, driven exactly as Daedalus drives it, with the official Python MCP SDK."""

import asyncio
import base64
import json
import re

import httpx
import pytest

import daedalus

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend():
    return "asyncio"


def test_registry_lists_every_agent(deployment):
    entries = daedalus.fetch_registry(deployment.registry_url)
    names = [e["server"]["name"] for e in entries]
    assert names == ["ca.helu.e2e/helper", "ca.helu.e2e/coordinator", "ca.helu.e2e/vision"]
    helper = entries[0]["server"]
    assert helper["title"] == "Helper Agent"
    assert helper["version"] == "1.0.0"
    assert helper["$schema"].endswith("/server.schema.json")
    assert daedalus.mcp_url(entries[0]) == deployment.mcp_url("helper")
    assert helper["capabilities"] == {
        "model": "passthrough",
        "vision": False,
        "context_window": 131072,
        "max_output_tokens": 16384,
    }
    for e in entries:
        assert re.fullmatch(r"[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+", e["server"]["name"])
        assert 1 <= len(e["server"]["description"]) <= 100
        assert e["_meta"]["io.modelcontextprotocol.registry/official"]["status"] == "active"


async def test_every_agent_lists_tools_and_answers_health(deployment):
    for entry in daedalus.fetch_registry(deployment.registry_url):
        agent = entry["server"]["name"].rsplit("/", 1)[1]
        async with daedalus.session(daedalus.mcp_url(entry)) as s:
            tools = {t.name: t for t in (await s.list_tools()).tools}
            assert {"send_message", "get_health", agent} <= tools.keys()
            assert daedalus.input_schema(tools["get_health"]) == {
                "type": "object",
                "properties": {},
                "additionalProperties": False,
            }
            assert tools["get_health"].description == (
                "Returns the health status of this agent and its downstream dependencies."
            )
            health = await daedalus.health(s)
            assert health["status"] == "ok", health
            assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", health["timestamp"])


async def test_send_message_with_progress_as_daedalus_renders_it(deployment):
    async with daedalus.session(deployment.mcp_url("coordinator")) as s:
        result, progress = await daedalus.chat(s, "coordinator", "***CALL_TOOL helper__helper {\"message\": \"ping\"}")
        assert not daedalus.is_error(result), result
        assert result.content[0].text == "ping"
        messages = [p["message"] for p in progress]
        assert messages == [
            "coordinator step 1 (llm)",
            "coordinator step 2 (tool)",
            "helper/helper: started",
            "helper step 1 (llm)",  # the helper agent's own progress, relayed
            "helper/helper: completed",
            "coordinator step 3 (llm)",
        ]
        values = [p["progress"] for p in progress]
        assert values == sorted(values) and len(set(values)) == len(values), values
        done = progress[4]
        assert done["total"] == done["progress"]
        assert all(p["total"] is None for i, p in enumerate(progress) if i != 4)


async def test_history_prompt_returns_the_conversation(deployment):
    async with daedalus.session(deployment.mcp_url("coordinator")) as s:
        prompts = {p.name for p in (await s.list_prompts()).prompts}
        assert "coordinator_history" in prompts
        result, _ = await daedalus.chat(s, "send_message", "remember the number 7")
        assert not daedalus.is_error(result)
        history = await s.get_prompt("coordinator_history")
        texts = [(m.role, m.content.text) for m in history.messages]
        assert texts == [("user", "remember the number 7"), ("assistant", "remember the number 7")]
    # connection scope: a new session starts a new conversation
    async with daedalus.session(deployment.mcp_url("coordinator")) as s:
        assert (await s.get_prompt("coordinator_history")).messages == []


async def test_a_history_over_one_mebibyte_reads_with_the_sdk_defaults(deployment):
    """A prompt or a resource is answered as one JSON object, which the SDK reads whole: as one
    server-sent event this history would pass the SDK's 1 MiB limit (docs/contract.md, "Streams")."""
    message = "\u20ac" * 200_000  # 600,000 bytes of UTF-8, twice in the history
    async with daedalus.session(deployment.mcp_url("coordinator")) as s:
        result, _ = await daedalus.chat(s, "send_message", message)
        assert not daedalus.is_error(result)
        history = await s.get_prompt("coordinator_history")
        assert [(m.role, m.content.text) for m in history.messages] == [
            ("user", message), ("assistant", message)]
        resource = await s.read_resource("pallas://agents/coordinator/history")
        messages = json.loads(resource.contents[0].text)["messages"]
        assert [(m["role"], m["content"]["text"]) for m in messages] == [("user", message), ("assistant", message)]


async def test_request_scope_agent_has_no_history_prompt(deployment):
    async with daedalus.session(deployment.mcp_url("vision")) as s:
        assert (await s.list_prompts()).prompts == []


async def test_bad_input_gets_a_clear_tool_error(deployment):
    async with daedalus.session(deployment.mcp_url("helper")) as s:
        result = await s.call_tool("send_message", arguments={"message": ""})
        assert daedalus.is_error(result) and "must not be empty" in result.content[0].text
        image = base64.b64encode(b"\x89PNG fake").decode()
        result = await s.call_tool(
            "send_message", arguments={"message": "look", "images": [{"data": image, "mime_type": "image/png"}]}
        )
        assert daedalus.is_error(result) and "not vision-capable" in result.content[0].text


async def test_concurrent_health_polls_and_chats(deployment):
    async with daedalus.session(deployment.mcp_url("helper")) as s:
        results = await asyncio.gather(
            *[daedalus.health(s) for _ in range(20)],
            *[daedalus.chat(s, "helper", f"message {i}") for i in range(20)],
        )
        assert all(r["status"] == "ok" for r in results[:20])
        assert sorted(r[0].content[0].text for r in results[20:]) == sorted(f"message {i}" for i in range(20))


def test_metrics_are_scraped_from_registry_and_agents(deployment):
    for url in [f"{deployment.registry_url}/metrics", f"http://localhost:{deployment.ports['helper']}/metrics"]:
        text = httpx.get(url).text
        assert "pallas_up 1.0" in text
        assert re.search(r'pallas_agent_info\{agent="helper",port="\d+"\} 1(\.0)?\n', text)
        assert "jvm_memory_used_bytes" in text
