"""Daedalus as it runs in a cluster (e2e/cluster/daedalus-job.yaml): the official Python MCP SDK
finds every agent through the registry Service and drives each one as Daedalus does (seed 000
§3-4, docs/contract.md). One line per check, `ok ...` or `FAIL ...`; the exit code is 0 only when
every check passed.

Environment: REGISTRY_URL (the registry Service), AGENTS (how many agents it must list), CALL
(`caller:callee`, an agent that has the other among its servers). For a fleet with inbound OAuth
(examples/secured.yaml): TOKEN_URL, CLIENT_ID, CLIENT_SECRET, USERNAME, PASSWORD (a user's token,
obtained through Daedalus' client with the password grant), and EXCHANGE (`agent:server__tool`, a
tool of a server the agent reaches with a token exchanged for the caller's).
"""

import asyncio
import json
import os
import sys

import httpx

import daedalus

failures = []


def check(name, ok, detail=""):
    print(f"{'ok' if ok else 'FAIL'} {name}{': ' + str(detail) if detail and not ok else ''}",
          flush=True)
    if not ok:
        failures.append(name)


def user_token():
    """The user's access token when the fleet asks for one (TOKEN_URL set), else None."""
    if not os.environ.get("TOKEN_URL"):
        return None
    response = httpx.post(os.environ["TOKEN_URL"], data={
        "grant_type": "password", "client_id": os.environ["CLIENT_ID"],
        "client_secret": os.environ["CLIENT_SECRET"], "username": os.environ["USERNAME"],
        "password": os.environ["PASSWORD"]})
    response.raise_for_status()
    return response.json()["access_token"]


def refused_without_token(agent, url):
    """An initialize without a token: 401 pointing at the agent's protected resource metadata."""
    response = httpx.post(url, headers={"Accept": "application/json, text/event-stream"}, json={
        "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "daedalus", "version": "1"}}})
    challenge = response.headers.get("www-authenticate", "")
    check(f"{agent} refuses a client without a token",
          response.status_code == 401 and "resource_metadata=" in challenge,
          f"{response.status_code} {challenge}")


async def exchanged(urls, headers, agent, tool):
    async with daedalus.session(urls[agent], headers) as s:
        result, _ = await daedalus.chat(s, "send_message", f'***CALL_TOOL {tool} {{"message": "exchanged"}}')
        text = result.content[0].text if result.content else ""
        check(f"{agent} calls {tool} with a token exchanged for the caller's",
              not daedalus.is_error(result) and "exchanged" in text, text)


async def each_agent(agent, url, headers=None):
    async with daedalus.session(url, headers) as s:
        tools = {t.name for t in (await s.list_tools()).tools}
        check(f"{agent} lists send_message, get_health and {agent}",
              {"send_message", "get_health", agent} <= tools, sorted(tools))
        health = await daedalus.health(s)
        check(f"{agent} is healthy", health["status"] == "ok", json.dumps(health))
        result, progress = await daedalus.chat(s, "send_message", "hello from daedalus")
        text = result.content[0].text if result.content else ""
        check(f"{agent} answers send_message", not daedalus.is_error(result) and text, text)
        check(f"{agent} reports progress as '{agent} step N (llm)'",
              progress and progress[0]["message"] == f"{agent} step 1 (llm)", progress)


async def agent_calls_agent(urls, caller, callee, headers=None):
    async with daedalus.session(urls[caller], headers) as s:
        message = f'***CALL_TOOL {callee}__{callee} {{"message": "ping"}}'
        result, progress = await daedalus.chat(s, caller, message)
        check(f"{caller} calls {callee}", not daedalus.is_error(result)
              and result.content[0].text == "ping", result)
        expected = [f"{caller} step 1 (llm)", f"{caller} step 2 (tool)",
                    f"{callee}/{callee}: started", f"{callee} step 1 (llm)",
                    f"{callee}/{callee}: completed", f"{caller} step 3 (llm)"]
        messages = [p["message"] for p in progress]
        values = [p["progress"] for p in progress]
        check(f"{caller} relays {callee}'s progress in order", messages == expected, messages)
        check("progress values increase", values == sorted(set(values)), values)
        history = await s.get_prompt(f"{caller}_history")
        turns = [(m.role, m.content.text) for m in history.messages]
        check(f"{caller}_history holds the conversation",
              turns == [("user", message), ("assistant", "ping")], turns)


async def main():
    registry = os.environ["REGISTRY_URL"]
    entries = daedalus.fetch_registry(registry)
    names = [e["server"]["name"].rsplit("/", 1)[1] for e in entries]
    expected = int(os.environ["AGENTS"])
    check(f"registry lists {expected} agents", len(names) == expected, names)
    urls = {name: daedalus.mcp_url(e) for name, e in zip(names, entries)}
    token = user_token()
    headers = {"Authorization": f"Bearer {token}"} if token else None
    for name, url in urls.items():
        print(f"   {name} at {url}", flush=True)
        if token:
            refused_without_token(name, url)
        await each_agent(name, url, headers)
    caller, callee = os.environ["CALL"].split(":")
    await agent_calls_agent(urls, caller, callee, headers)
    if os.environ.get("EXCHANGE"):
        agent, tool = os.environ["EXCHANGE"].split(":")
        await exchanged(urls, headers, agent, tool)


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except Exception as e:  # the verdict must name what broke, not only exit non-zero
        while isinstance(e, ExceptionGroup) and len(e.exceptions) == 1:  # anyio's task groups
            e = e.exceptions[0]
        check("daedalus ran to the end", False, f"{type(e).__name__}: {e}")
    print(f"{len(failures)} checks failed" if failures else "every check passed", flush=True)
    sys.exit(1 if failures else 0)
