#!/usr/bin/env bash
# Builds both images and measures them: sizes, the runtime image's start to /readyz with and
# without its AOT cache, and an agent pod's memory with the image's JVM options and the former
# ones (benchmarks/images.py). Writes the "Images" section of docs/benchmarks.md.
# Needs root, as a container runtime does. Takes about 6 minutes (7 runs of each).
set -euo pipefail
cd "$(dirname "$0")/.."
./mvnw -q -DskipTests package -pl agent-runtime,operator -am
python3 benchmarks/images.py "$@"
