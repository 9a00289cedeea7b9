"""One trace from the Python SDK client, traced with the OpenTelemetry Python SDK, through
coordinator -> helper -> server-everything from npm, read back from a real Jaeger v2
(docs/observability.md)."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import httpx
import pytest
from opentelemetry import propagate, trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

import daedalus
from conftest import ROOT, free_port, jar, wait_for
from npm_servers import everything_entry

pytestmark = pytest.mark.anyio

# as testing/JaegerServer and testing/ServerEverything in agent-runtime build and install them
JAEGER_MODULE = "github.com/jaegertracing/jaeger"
JAEGER_VERSION = "v1.76.0"
HOME = Path.home()


@pytest.fixture
def anyio_backend():
    return "asyncio"


def jaeger_binary() -> Path:
    """Built once from the Go module proxy, as testing/JaegerServer does (docs/development.md)."""
    binary = HOME / ".cache/pallas/jaeger" / JAEGER_VERSION / "jaeger"
    if not os.access(binary, os.X_OK):
        binary.parent.mkdir(parents=True, exist_ok=True)
        info = subprocess.run(
            ["go", "mod", "download", "-json", f"{JAEGER_MODULE}@{JAEGER_VERSION}"],
            check=True, capture_output=True, text=True,
        )
        partial = binary.with_suffix(".partial-py")
        subprocess.run(
            ["go", "build", "-trimpath", "-o", str(partial), "./cmd/jaeger"],
            cwd=json.loads(info.stdout)["Dir"], check=True, timeout=1800,
        )
        partial.rename(binary)
    return binary


@pytest.fixture(scope="module")
def jaeger():
    work = Path(tempfile.mkdtemp(prefix="pallas-jaeger-"))
    otlp, query, grpc, health = free_port(), free_port(), free_port(), free_port()
    (work / "config.yaml").write_text(textwrap.dedent(f"""
        service:
          extensions: [jaeger_storage, jaeger_query, healthcheckv2]
          pipelines:
            traces: {{receivers: [otlp], processors: [batch], exporters: [jaeger_storage_exporter]}}
          telemetry: {{metrics: {{level: none}}}}
        extensions:
          healthcheckv2: {{use_v2: true, http: {{endpoint: "127.0.0.1:{health}"}}}}
          jaeger_query:
            storage: {{traces: memstore}}
            http: {{endpoint: "127.0.0.1:{query}"}}
            grpc: {{endpoint: "127.0.0.1:{grpc}"}}
          jaeger_storage:
            backends: {{memstore: {{memory: {{max_traces: 1000}}}}}}
        receivers:
          otlp: {{protocols: {{http: {{endpoint: "127.0.0.1:{otlp}"}}}}}}
        processors:
          batch: {{timeout: 100ms}}
        exporters:
          jaeger_storage_exporter: {{trace_storage: memstore}}
        """))
    with open(work / "log", "w") as out:
        process = subprocess.Popen(
            [str(jaeger_binary()), "--config", str(work / "config.yaml")],
            cwd=work, stdout=out, stderr=subprocess.STDOUT,
        )
    try:
        wait_for(f"http://127.0.0.1:{query}/api/services", process=process)
        yield f"http://127.0.0.1:{otlp}", f"http://127.0.0.1:{query}"
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.fixture(scope="module")
def everything():
    port = free_port()
    process = subprocess.Popen(
        ["node", str(everything_entry()), "streamableHttp"],
        env={**os.environ, "PORT": str(port)},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            httpx.get(f"http://127.0.0.1:{port}/mcp", timeout=1)
            break
        except httpx.TransportError:
            time.sleep(0.1)
    yield f"http://127.0.0.1:{port}/mcp"
    process.terminate()
    process.wait(timeout=30)


@pytest.fixture(scope="module")
def traced_fleet(jaeger, everything):
    jar()  # built by the Maven build before these tests
    otlp, _ = jaeger
    registry, helper, coordinator = free_port(), free_port(), free_port()
    work = Path(tempfile.mkdtemp(prefix="pallas-traced-"))
    (work / "deployment.yaml").write_text(textwrap.dedent(f"""
        apiVersion: pallas.helu.ca/v1alpha1
        kind: PallasDeployment
        metadata: {{name: traced}}
        spec:
          registry: {{port: {registry}}}
          defaultModel: passthrough
          mcpServers: [{{name: everything, url: "{everything}"}}]
          agents:
            - {{name: helper, port: {helper}, servers: [everything], instanceScope: request}}
            - {{name: coordinator, port: {coordinator}, servers: [helper], instanceScope: connection}}
        """))
    with open(work / "serve.log", "w") as out:
        process = subprocess.Popen(
            [str(ROOT / "pallas"), "serve", "-f", str(work / "deployment.yaml")],
            cwd=work,
            env={
                **os.environ,
                "PALLAS_JAVA_OPTS": "-Xmx256m",
                "OTEL_EXPORTER_OTLP_ENDPOINT": otlp,
                "OTEL_SERVICE_NAME": "pallas-e2e",
                "OTEL_BSP_SCHEDULE_DELAY": "100",
            },
            stdout=out, stderr=subprocess.STDOUT,
        )
    try:
        wait_for(f"http://localhost:{coordinator}/readyz", process=process)
        wait_for(f"http://localhost:{helper}/readyz", process=process)
        yield f"http://localhost:{coordinator}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=30)


async def test_a_python_client_call_through_two_agents_and_an_npm_server_is_one_trace(jaeger, traced_fleet):
    otlp, query = jaeger
    provider = TracerProvider(resource=Resource.create({"service.name": "daedalus-e2e"}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{otlp}/v1/traces")))
    tracer = provider.get_tracer("daedalus-e2e")
    # passthrough runs the tool call a message names: coordinator asks helper, helper asks everything
    inner = "***CALL_TOOL everything__echo " + json.dumps({"message": "traced words"})
    outer = "***CALL_TOOL helper__helper " + json.dumps({"message": inner})
    with tracer.start_as_current_span("daedalus send_message", kind=trace.SpanKind.CLIENT) as span:
        headers: dict[str, str] = {}
        propagate.inject(headers)  # W3C traceparent, the Python SDK's default propagator
        async with daedalus.session(traced_fleet, headers=headers) as s:
            result, _ = await daedalus.chat(s, "send_message", outer)
        client_span = format(span.get_span_context().span_id, "016x")
        trace_id = format(span.get_span_context().trace_id, "032x")
    provider.shutdown()
    assert not daedalus.is_error(result), result
    assert "traced words" in result.content[0].text

    spans: list[dict] = []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        answer = httpx.get(f"{query}/api/traces/{trace_id}", timeout=10)
        body = answer.json()
        spans = [s for t in body.get("data") or [] for s in t["spans"]]
        if len(spans) >= 12:  # the client span and the eleven of the two agents
            break
        time.sleep(0.2)
    names = {s["spanID"]: s["operationName"] for s in spans}
    parent = {s["spanID"]: next((r["spanID"] for r in s["references"] if r["refType"] == "CHILD_OF"), None) for s in spans}
    tags = {s["spanID"]: {t["key"]: str(t["value"]) for t in s["tags"]} for s in spans}

    def child(of: str, name: str) -> str:
        found = [i for i, p in parent.items() if p == of and names[i] == name]
        assert len(found) == 1, f"one {name} under {names.get(of, of)}: {sorted(names.values())}"
        return found[0]

    assert names[client_span] == "daedalus send_message"
    coordinator_call = child(client_span, "tools/call send_message")
    coordinator = child(coordinator_call, "invoke_agent coordinator")
    to_helper = child(coordinator, "tools/call helper")
    assert tags[to_helper]["pallas.peer.agent"] == "helper"
    helper_call = child(to_helper, "tools/call helper")
    helper = child(helper_call, "invoke_agent helper")
    echo = child(helper, "tools/call echo")
    assert tags[echo]["pallas.mcp.server"] == "everything"
    assert tags[echo]["span.kind"] == "client"
    assert "error.type" not in tags[echo]
    assert tags[helper]["gen_ai.agent.name"] == "helper"
    assert [names[i] for i, p in parent.items() if p == helper].count("chat passthrough") == 2
    assert not any("traced words" in v for t in tags.values() for v in t.values())

    # the picture of docs/observability.md, "One trace": this trace drawn by the documented command
    picture = trace_picture(answer.text)
    rows = [t.text.strip() for t in picture.iter("{http://www.w3.org/2000/svg}text")
            if t.text and t.text.strip() in set(names.values())]
    assert sorted(rows) == sorted(names.values()), rows
    bars = [r for r in picture.iter("{http://www.w3.org/2000/svg}rect") if r.find("{*}title") is not None]
    assert len(bars) == len(spans)


def trace_picture(query_answer: str) -> ET.Element:
    """docs/tools/trace-svg.py on the query API's answer, as docs/observability.md shows it; kept
    at $PALLAS_TRACE_SVG when set (how docs/images/one-trace.svg is made)."""
    work = Path(tempfile.mkdtemp(prefix="pallas-trace-svg-"))
    (work / "trace.json").write_text(query_answer)
    with open(work / "trace.svg", "w") as out:
        subprocess.run([sys.executable, str(ROOT / "docs/tools/trace-svg.py"), str(work / "trace.json")],
                       stdout=out, check=True, timeout=60)
    if os.environ.get("PALLAS_TRACE_SVG"):
        shutil.copyfile(work / "trace.svg", os.environ["PALLAS_TRACE_SVG"])
    return ET.parse(work / "trace.svg").getroot()
