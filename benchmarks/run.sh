#!/usr/bin/env bash
# Builds the runtime and the benchmark tool, then measures and writes docs/benchmarks.md.
# Needs wrk (Debian: apt-get install wrk) for the server-capacity and registry rows.
# Takes about 12 minutes; --quick gives rough numbers in about 2 minutes (not for docs).
# The peer, fast-agent, is installed on first use in a venv under ~/.cache/pallas/bench (needs a
# Python >= 3.12: PALLAS_BENCH_PYTHON, a pyenv one, or python3); --no-peer leaves it out.
# --only sdk,wrk,... runs some scenarios and prints them without touching docs/benchmarks.md.
set -euo pipefail
cd "$(dirname "$0")/.."
./mvnw -q -DskipTests -pl benchmarks -am package
. .mvn/select-jdk.sh
java="${JAVA_HOME:+$JAVA_HOME/bin/}java"
unsafe=
[ "$(pallas_java_major "$java")" -lt 24 ] || unsafe=--sun-misc-unsafe-memory-access=allow
"$java" $unsafe -jar benchmarks/target/pallas-benchmarks.jar "$@"
