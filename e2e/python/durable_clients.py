"""Daedalus-like clients holding conversations with one agent while it is disturbed (issue 17 §5):
each client opens one MCP session with the official Python SDK, as Daedalus does, and sends
`send_message` turns on it one after another until told to stop; then each sends one more turn and
reads the agent's `{agent}_history` prompt on the same session, and checks that every turn it made
is there, in order (for a `shared` agent: its own turns among everyone's). The agent must run the
built-in passthrough model, which answers each message with the message itself.

A client does not re-initialize when a call fails: Daedalus and the SDKs do not, so a session the
agent lost is a failed message to a user, and here every later call on it fails too.

With `--via TOOL` each turn asks the agent (on the passthrough model) to call TOOL, another agent,
with the turn's message, and expects that agent's answer: calls from agent to agent, under the same
checks. `--prefix` names the clients' messages ("PREFIX 3 turn 7"), so that runs against agents that
share a conversation tell their turns apart; `--pause` waits between a client's turns, to set the
load.

    python durable_clients.py --url http://agent/mcp --agent NAME [--clients 20] [--prefix P]
        [--via TOOL] [--pause SECONDS] [--call-timeout SECONDS]
        [--turns N | --seconds S | --until-file PATH]

prints `sessions open N` once every client has initialized, then at the end `turns made N`, `turns
found N`, `calls failed N` and `calls per second R` (and one `failed ...` line per failure, with its
reason); exits 0 only when no call failed and every turn was found.
"""

import argparse
import asyncio
import json
import os
import sys
import time
from dataclasses import dataclass, field

import daedalus


@dataclass
class Options:
    prefix: str = "client"
    via: str | None = None
    pause: float = 0.0
    call_timeout: float = 120.0


@dataclass
class Client:
    index: int
    options: Options
    made: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    found: int = 0

    def own(self) -> str:
        """What every message of this client, and no other's, contains."""
        return f"{self.options.prefix} {self.index} turn "

    def answer(self, turn: int) -> str:
        return f"{self.own()}{turn}"

    def message(self, turn: int) -> str:
        """What the client sends: the answer itself, or the request to relay it."""
        if self.options.via is None:
            return self.answer(turn)
        return f"***CALL_TOOL {self.options.via} {json.dumps({'message': self.answer(turn)})}"


async def turn(s, client: Client, number: int) -> None:
    message = client.message(number)
    try:
        result, _ = await asyncio.wait_for(daedalus.chat(s, "send_message", message),
                                           client.options.call_timeout)
    except Exception as e:  # noqa: BLE001 - every way a call can fail is counted, with its reason
        client.failures.append(f"{message}: {describe(e)}")
        return
    text = result.content[0].text if result.content else ""
    if daedalus.is_error(result) or text != client.answer(number):
        client.failures.append(f"{message}: {text}")
    else:
        client.made.append(message)


async def history_of(s, agent: str, client: Client) -> list[str]:
    """The client's own user turns in the agent's history, in order."""
    prompt = await s.get_prompt(f"{agent}_history")
    return [m.content.text for m in prompt.messages
            if m.role == "user" and client.own() in m.content.text]


async def run_client(url: str, agent: str, client: Client, keep_going, started: asyncio.Event,
                     ready: list) -> None:
    async with daedalus.session(url) as s:
        ready.append(client.index)
        await started.wait()
        number = 0
        while keep_going(number):
            await turn(s, client, number)
            number += 1
            if client.options.pause:
                await asyncio.sleep(client.options.pause)
        # after the disturbance: the next call continues the conversation
        await turn(s, client, number)
        try:
            turns = await history_of(s, agent, client)
        except Exception as e:  # noqa: BLE001
            client.failures.append(f"{agent}_history: {describe(e)}")
            return
        client.found = sum(1 for t in client.made if t in turns)
        if turns != client.made:
            client.failures.append(
                f"history of client {client.index}: made {client.made}, found {turns}")


async def run(url: str, agent: str, clients: int, options: Options, keep_going) -> list[Client]:
    everyone = [Client(i, options) for i in range(clients)]
    started = asyncio.Event()
    ready: list[int] = []
    tasks = [asyncio.create_task(run_client(url, agent, c, keep_going, started, ready))
             for c in everyone]
    while len(ready) < clients and not any(t.done() for t in tasks):
        await asyncio.sleep(0.05)
    if len(ready) == clients:
        print(f"sessions open {clients}", flush=True)
    started.set()  # every session open: the turns start together
    results = await asyncio.gather(*tasks, return_exceptions=True)
    for client, outcome in zip(everyone, results):
        if isinstance(outcome, BaseException):
            client.failures.append(f"client {client.index}: {describe(outcome)}")
    return everyone


def describe(e: BaseException) -> str:
    """An exception and, for a group (the SDK's task groups), what is inside it."""
    if isinstance(e, BaseExceptionGroup):
        return "; ".join(describe(inner) for inner in e.exceptions)
    return f"{type(e).__name__}: {e}"


def report(everyone: list[Client], seconds: float) -> bool:
    made = sum(len(c.made) for c in everyone)
    found = sum(c.found for c in everyone)
    failed = [f for c in everyone for f in c.failures]
    for f in failed:
        print(f"failed {f[:500]}", flush=True)
    print(f"turns made {made}", flush=True)
    print(f"turns found {found}", flush=True)
    print(f"calls failed {len(failed)}", flush=True)
    print(f"calls per second {made / seconds:.1f}", flush=True)
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
    parser.add_argument("--prefix", default="client", help="the clients' messages start with it")
    parser.add_argument("--via", help="a tool of the agent that calls another agent")
    parser.add_argument("--pause", type=float, default=0.0, help="seconds between a client's turns")
    parser.add_argument("--call-timeout", type=float, default=120.0,
                        help="seconds a call may take before it counts as failed")
    until = parser.add_mutually_exclusive_group(required=True)
    until.add_argument("--turns", type=int, help="turns per client before the last one")
    until.add_argument("--seconds", type=float, help="send turns for this long")
    until.add_argument("--until-file", help="send turns until this file exists")
    args = parser.parse_args()
    options = Options(args.prefix, args.via, args.pause, args.call_timeout)
    start = time.monotonic()
    everyone = asyncio.run(run(args.url, args.agent, args.clients, options, keep_going_for(args)))
    sys.exit(0 if report(everyone, time.monotonic() - start) else 1)


if __name__ == "__main__":
    main()
