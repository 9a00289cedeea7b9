#!/usr/bin/env bash
# Installs what the cross-language tests need into e2e/.work (idempotent, cached):
#  - a Python venv with the official MCP SDK (what Daedalus uses) and pytest;
#  - the MCP conformance suite from npm. It imports fs.globSync (Node 22+); on Node 20 that one
#    import is taken from the `glob` package instead;
#  - beside it, the official TypeScript MCP SDK, which e2e/ts/oauth_client.mjs uses.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work="$here/.work"
mkdir -p "$work"

stamp="$work/.venv.stamp"
if [ ! -x "$work/venv/bin/python" ] || ! cmp -s "$here/requirements.txt" "$stamp"; then
  python3 -m venv "$work/venv"
  "$work/venv/bin/pip" install -q --disable-pip-version-check -r "$here/requirements.txt"
  cp "$here/requirements.txt" "$stamp"
fi

conformance_version=0.1.16
sdk_version=1.32.2
cdir="$work/conformance"
entry="$cdir/node_modules/@modelcontextprotocol/conformance/dist/index.js"
if [ ! -f "$entry" ] || ! grep -q "\"version\": \"$conformance_version\"" \
    "$cdir/node_modules/@modelcontextprotocol/conformance/package.json" \
    || ! grep -q "\"version\": \"$sdk_version\"" \
    "$cdir/node_modules/@modelcontextprotocol/sdk/package.json" 2>/dev/null; then
  mkdir -p "$cdir"
  (cd "$cdir" && npm install --silent --no-audit --no-fund \
      "@modelcontextprotocol/conformance@$conformance_version" \
      "@modelcontextprotocol/sdk@$sdk_version" glob@11 >/dev/null)
fi
node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" -lt 22 ] && grep -q 'globSync as o,' "$entry"; then
  sed -i 's/import{existsSync as a,globSync as o,mkdtempSync as s,promises as c,readFileSync as l}from"fs";/import{existsSync as a,mkdtempSync as s,promises as c,readFileSync as l}from"fs";import{globSync as o}from"glob";/' "$entry"
  grep -q 'from"glob"' "$entry" || { echo "setup.sh: could not patch the conformance suite for Node $node_major" >&2; exit 1; }
fi
echo "e2e tools ready in $work"
