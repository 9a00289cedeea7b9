"""Daedalus-like clients holding conversations with one agent while it is disturbed (issue 17 §5):
each client opens one MCP session with the official Python SDK, as Daedalus does, and sends
`send_message` turns on it one after another until told to stop; then each sends one more turn and
reads the agent's `{agent}_history` prompt on the same session, and checks that every turn it made
is there, in order (for a `shared` agent: its own turns among everyone's). The agent must run the
built-in passthrough model, which answers each message with the message itself.

A client does not re-initialize when a call fails: Daedalus and the SDKs do not, so a session the
agent lost is a failed message to a user, and here every later call on it fails too.

    python durable_clients.py --url http://agent/mcp --agent NAME [--clients 20]
        [--turns N | --seconds S | --until-file PATH]

prints `turns made N`, `turns found N`, `calls failed N` (and one `failed ...` line per failure,
with its reason); exits 0 only when no call failed and every turn was found.
"""

import argparse
import asyncio
import os
import sys
import time
from dataclasses import dataclass, field

import daedalus


@dataclass
class Client:
    index: int
    made: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    found: int = 0

    def message(self, turn: int) -> str:
        return f"client {self.index} turn {turn}"


async def turn(s, client: Client, number: int) -> None:
    message = client.message(number)
    try:
        result, _ = await daedalus.chat(s, "send_message", message)
    except Exception as e:  # noqa: BLE001 - every way a call can fail is counted, with its reason
        client.failures.append(f"{message}: {type(e).__name__}: {e}")
        return
    text = result.content[0].text if result.content else ""
    if daedalus.is_error(result) or text != message:
        client.failures.append(f"{message}: {text}")
    else:
        client.made.append(message)


async def history_of(s, agent: str, client: Client) -> list[str]:
    """The client's own user turns in the agent's history, in order."""
    prompt = await s.get_prompt(f"{agent}_history")
    own = f"client {client.index} turn "
    return [m.content.text for m in prompt.messages
            if m.role == "user" and m.content.text.startswith(own)]


async def run_client(url: str, agent: str, client: Client, keep_going, started: asyncio.Event,
                     ready: list) -> None:
    async with daedalus.session(url) as s:
        ready.append(client.index)
        await started.wait()
        number = 0
        while keep_going(number):
            await turn(s, client, number)
            number += 1
        # after the disturbance: the next call continues the conversation
        await turn(s, client, number)
        try:
            turns = await history_of(s, agent, client)
        except Exception as e:  # noqa: BLE001
            client.failures.append(f"{agent}_history: {type(e).__name__}: {e}")
            return
        client.found = sum(1 for t in client.made if t in turns)
        if turns != client.made:
            client.failures.append(
                f"history of client {client.index}: made {client.made}, found {turns}")


async def run(url: str, agent: str, clients: int, keep_going) -> list[Client]:
    everyone = [Client(i) for i in range(clients)]
    started = asyncio.Event()
    ready: list[int] = []
    tasks = [asyncio.create_task(run_client(url, agent, c, keep_going, started, ready))
             for c in everyone]
    while len(ready) < clients and not any(t.done() for t in tasks):
        await asyncio.sleep(0.05)
    started.set()  # every session open: the turns start together
    results = await asyncio.gather(*tasks, return_exceptions=True)
    for client, outcome in zip(everyone, results):
        if isinstance(outcome, BaseException):
            client.failures.append(f"client {client.index}: {type(outcome).__name__}: {outcome}")
    return everyone


def report(everyone: list[Client]) -> bool:
    made = sum(len(c.made) for c in everyone)
    found = sum(c.found for c in everyone)
    failed = [f for c in everyone for f in c.failures]
    for f in failed:
        print(f"failed {f[:500]}", flush=True)
    print(f"turns made {made}", flush=True)
    print(f"turns found {found}", flush=True)
    print(f"calls failed {len(failed)}", flush=True)
    return not failed and found == made


def keep_going_for(args):
    if args.turns is not None:
        return lambda number: number < args.turns
    if args.seconds is not None:
        end = time.monotonic() + args.seconds
        return lambda number: time.monotonic() < end
    return lambda number: not os.path.exists(args.until_file)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True, help="the agent's MCP endpoint")
    parser.add_argument("--agent", required=True, help="the agent's name")
    parser.add_argument("--clients", type=int, default=20)
    until = parser.add_mutually_exclusive_group(required=True)
    until.add_argument("--turns", type=int, help="turns per client before the last one")
    until.add_argument("--seconds", type=float, help="send turns for this long")
    until.add_argument("--until-file", help="send turns until this file exists")
    args = parser.parse_args()
    everyone = asyncio.run(run(args.url, args.agent, args.clients, keep_going_for(args)))
    sys.exit(0 if report(everyone) else 1)


if __name__ == "__main__":
    main()
