#!/usr/bin/env bash
# Measures the operator on a real kube-apiserver and writes the "Operator" section of
# docs/benchmarks.md. Builds what it needs (tools/go-binaries.sh). Takes about 5 minutes.
# OPERATOR_JVM_OPTS adds JVM options to the operator process (beside -Xmx256m).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/go-binaries.sh kube-apiserver kubectl etcd
./mvnw -q -DskipTests -pl benchmarks -am package
. .mvn/select-jdk.sh
java="${JAVA_HOME:+$JAVA_HOME/bin/}java"
"$java" -cp benchmarks/target/pallas-benchmarks.jar ca.helu.pallas.bench.OperatorBenchmark "$@"
