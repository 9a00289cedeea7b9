"""A Daedalus-like client of an agent that asks for OAuth tokens (issue 18 §6): the official Python
MCP SDK's client-credentials provider, given only the agent's MCP URL and its client's id and
secret, follows the agent's 401 to its Protected Resource Metadata (RFC 9728), discovers the
issuer named there, obtains a token and calls `send_message`. The same call without a token is
refused.

    python oauth_client.py --url http://localhost:PORT/mcp --issuer ISSUER --client-id ID
        --client-secret SECRET [--scope agents:call] --message TEXT

prints `without a token: <the error>`, then `answer: <text>`; exits 0 when the call without a token
was refused (401, "Unauthorized") and the one with a token answered.
"""

import argparse
import asyncio
import sys

import httpx2
from mcp import ClientSession
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.client.streamable_http import streamable_http_client

import daedalus


class MemoryStorage:
    """Tokens kept for the run only (the SDK's TokenStorage protocol)."""

    def __init__(self):
        self.tokens = None
        self.client_info = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client_info

    async def set_client_info(self, client_info):
        self.client_info = client_info


async def call(url: str, message: str, auth=None) -> str:
    async with httpx2.AsyncClient(auth=auth, timeout=60) as http:
        async with streamable_http_client(url, http_client=http) as streams:
            async with ClientSession(streams[0], streams[1]) as s:
                await s.initialize()
                result, _ = await daedalus.chat(s, "send_message", message)
                if daedalus.is_error(result):
                    raise RuntimeError(result.content[0].text)
                return result.content[0].text


def describe(e: BaseException) -> str:
    if isinstance(e, BaseExceptionGroup):
        return "; ".join(describe(inner) for inner in e.exceptions)
    return f"{type(e).__name__}: {e}"


async def main(args) -> int:
    refused = False
    try:
        await call(args.url, args.message)
        print("without a token: answered", flush=True)
    except BaseException as e:  # noqa: BLE001 - the SDK raises its transport's errors in groups
        text = describe(e)
        # the SDK raises the 401's JSON-RPC error: "Unauthorized: a bearer token is required ..."
        refused = "Unauthorized" in text
        print(f"without a token: {text[:300]}", flush=True)
    provider = ClientCredentialsOAuthProvider(
        server_url=args.url,
        storage=MemoryStorage(),
        client_id=args.client_id,
        client_secret=args.client_secret,
        scope=args.scope,
        issuer=args.issuer,
    )
    answer = await call(args.url, args.message, auth=provider)
    print(f"answer: {answer}", flush=True)
    return 0 if refused and answer == args.message else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--issuer", required=True)
    parser.add_argument("--client-id", required=True)
    parser.add_argument("--client-secret", required=True)
    parser.add_argument("--scope")
    parser.add_argument("--message", required=True)
    sys.exit(asyncio.run(main(parser.parse_args())))
