"""Real MCP servers from npm for the e2e tests, installed once into ~/.cache/pallas-test."""

import subprocess
from pathlib import Path

HOME = Path.home()
EVERYTHING_VERSION = "2026.8.31"
MEMORY_VERSION = "2026.8.31"
SUPERGATEWAY_VERSION = "4.0.0"


def installed(cache_name: str, packages: list[str], entry: str) -> Path:
    """`entry` under a cache holding `packages`, installed with npm the first time."""
    cache = HOME / ".cache/pallas-test" / cache_name
    path = cache / entry
    if not path.exists():
        cache.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix", str(cache), *packages],
            check=True, timeout=300,
        )
    return path


def everything_entry() -> Path:
    """@modelcontextprotocol/server-everything, as testing/ServerEverything installs it."""
    return installed(
        f"server-everything-{EVERYTHING_VERSION}",
        [f"@modelcontextprotocol/server-everything@{EVERYTHING_VERSION}"],
        "node_modules/@modelcontextprotocol/server-everything/dist/index.js",
    )


def memory_entries() -> tuple[Path, Path]:
    """@modelcontextprotocol/server-memory (stdio) and supergateway, which serves it over Streamable HTTP."""
    name = f"server-memory-{MEMORY_VERSION}-supergateway-{SUPERGATEWAY_VERSION}"
    packages = [f"@modelcontextprotocol/server-memory@{MEMORY_VERSION}", f"supergateway@{SUPERGATEWAY_VERSION}"]
    memory = installed(name, packages, "node_modules/@modelcontextprotocol/server-memory/dist/index.js")
    gateway = installed(name, packages, "node_modules/supergateway/dist/index.js")
    return memory, gateway
