"""What Daedalus does, with the official MCP Python SDK (seed 000 §3-4)."""

import contextlib
import json

import httpx
from mcp import ClientSession

try:  # mcp >= 1.25 / 2.x
    from mcp.client.streamable_http import streamable_http_client as _client
except ImportError:  # older 1.x
    from mcp.client.streamable_http import streamablehttp_client as _client


def fetch_registry(registry_url: str) -> list[dict]:
    response = httpx.get(f"{registry_url}/.well-known/mcp/server.json", headers={"Accept": "application/json"})
    response.raise_for_status()
    assert response.headers["content-type"].startswith("application/json")
    return response.json()["servers"]


def mcp_url(entry: dict) -> str:
    return next(r["url"] for r in entry["server"]["remotes"] if r["type"] == "streamable-http")


@contextlib.asynccontextmanager
async def session(url: str, headers: dict | None = None, message_handler=None):
    async with contextlib.AsyncExitStack() as stack:
        if headers:
            http = await stack.enter_async_context(httpx.AsyncClient(headers=headers, timeout=60))
            streams = await stack.enter_async_context(_client(url, http_client=http))
        else:
            streams = await stack.enter_async_context(_client(url))
        read, write = streams[0], streams[1]
        s = await stack.enter_async_context(ClientSession(read, write, message_handler=message_handler))
        await s.initialize()
        yield s


async def health(s: ClientSession) -> dict:
    result = await s.call_tool("get_health")
    assert not is_error(result)
    return json.loads(result.content[0].text)


async def chat(s: ClientSession, tool: str, message: str, **extra) -> tuple[object, list[dict]]:
    """call_tool with a progressToken, collecting progress as Daedalus renders it."""
    seen: list[dict] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append({"progress": progress, "total": total, "message": message})

    # The SDK puts a progressToken into _meta when a progress callback is given.
    result = await s.call_tool(tool, arguments={"message": message, **extra}, progress_callback=on_progress)
    return result, seen


def is_error(result) -> bool:
    """CallToolResult.isError (SDK 1.x) / is_error (SDK 2.x)."""
    return bool(getattr(result, "is_error", getattr(result, "isError", False)))


def input_schema(tool) -> dict:
    """Tool.inputSchema (SDK 1.x) / input_schema (SDK 2.x)."""
    return getattr(tool, "input_schema", None) or getattr(tool, "inputSchema")
