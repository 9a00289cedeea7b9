#!/usr/bin/env bash
# Builds the runtime and the benchmark tool, then measures and writes docs/benchmarks.md.
# Needs wrk (Debian: apt-get install wrk) for the server-capacity and registry rows.
# Takes about 7 minutes; --quick gives rough numbers in about 1 minute (not for docs).
set -euo pipefail
cd "$(dirname "$0")/.."
./mvnw -q -DskipTests -pl benchmarks -am package
. .mvn/select-jdk.sh
java="${JAVA_HOME:+$JAVA_HOME/bin/}java"
unsafe=
[ "$(pallas_java_major "$java")" -lt 24 ] || unsafe=--sun-misc-unsafe-memory-access=allow
"$java" $unsafe -jar benchmarks/target/pallas-benchmarks.jar "$@"
