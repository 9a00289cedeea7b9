#!/usr/bin/env bash
# Builds both images and measures them: sizes, and the runtime image's start to /readyz with and
# without its AOT cache (benchmarks/images.py). Writes the "Images" section of docs/benchmarks.md.
# Needs root, as a container runtime does. Takes about 2 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
./mvnw -q -DskipTests package -pl agent-runtime,operator -am
python3 benchmarks/images.py "$@"
