#!/usr/bin/env python3
"""Draws one trace as Jaeger's query API gives it (GET /api/traces/TRACE_ID) as an SVG timeline:
one row per span, indented under its parent, a bar from its start to its end, coloured by service,
red where the span failed (docs/observability.md, "One trace").

    curl -s http://JAEGER:16686/api/traces/TRACE_ID > trace.json
    docs/tools/trace-svg.py trace.json > trace.svg

Python's standard library only. e2e/python/test_tracing.py runs it on the trace it reads back.
"""
import argparse
import json
import sys
from xml.sax.saxutils import escape

ROW = 22
LABELS = 420  # the width of the span names' column
BARS = 520  # the width of the timeline
INDENT = 16
TOP = 58  # the title and the time axis
COLOURS = ["#3b7dd8", "#e08a1e", "#2e9e5b", "#8e5bd0", "#c2417c", "#4aa3a3"]
FAILED = "#d62728"


def spans_of(document):
    """The spans of the one trace in a query API answer, as dicts with their parent and depth,
    in the order of a depth-first walk by start time."""
    traces = document.get("data") or []
    if len(traces) != 1:
        sys.exit(f"trace-svg: expected one trace, the document holds {len(traces)}")
    trace = traces[0]
    services = {pid: p["serviceName"] for pid, p in trace["processes"].items()}
    spans = {}
    for s in trace["spans"]:
        parent = next((r["spanID"] for r in s.get("references", [])
                       if r.get("refType") == "CHILD_OF"), None)
        tags = {t["key"]: t["value"] for t in s.get("tags", [])}
        spans[s["spanID"]] = {
            "id": s["spanID"], "parent": parent, "name": s["operationName"],
            "service": services.get(s["processID"], "?"), "start": s["startTime"],
            "duration": s["duration"], "kind": tags.get("span.kind", "internal"),
            "failed": tags.get("error") in (True, "true") or "error.type" in tags,
            "error": tags.get("error.type"),
        }
    children = {}
    for s in spans.values():
        key = s["parent"] if s["parent"] in spans else None
        children.setdefault(key, []).append(s)
    ordered = []

    def walk(parent, depth):
        for s in sorted(children.get(parent, []), key=lambda c: (c["start"], c["name"])):
            s["depth"] = depth
            ordered.append(s)
            walk(s["id"], depth + 1)

    walk(None, 0)
    return trace["traceID"], ordered


def millis(micros):
    if micros == 0:
        return "0"
    return f"{micros / 1000:.1f} ms" if micros < 100_000 else f"{micros / 1_000_000:.2f} s"


def svg(trace_id, spans):
    begin = min(s["start"] for s in spans)
    end = max(s["start"] + s["duration"] for s in spans)
    total = max(end - begin, 1)
    colour = {}
    for s in spans:
        colour.setdefault(s["service"], COLOURS[len(colour) % len(COLOURS)])
    width = LABELS + BARS + 90
    height = TOP + ROW * len(spans) + 40
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" '
           f'font-size="12">',
           f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
           f'<text x="10" y="20" font-size="14" font-weight="bold">trace {escape(trace_id)}</text>',
           f'<text x="{LABELS}" y="20" fill="#555">{len(spans)} spans, '
           f'{len(colour)} services, {millis(total)}</text>']
    # the time axis: five ticks from the trace's start to its end
    for i in range(5):
        x = LABELS + BARS * i / 4
        out.append(f'<line x1="{x:.1f}" y1="{TOP - 14}" x2="{x:.1f}" '
                   f'y2="{TOP + ROW * len(spans)}" stroke="#e4e4e4"/>')
        anchor = "start" if i == 0 else "end" if i == 4 else "middle"
        out.append(f'<text x="{x:.1f}" y="{TOP - 18}" fill="#777" font-size="11" '
                   f'text-anchor="{anchor}">{millis(total * i / 4)}</text>')
    for row, s in enumerate(spans):
        y = TOP + row * ROW
        if row % 2:
            out.append(f'<rect x="0" y="{y}" width="{width}" height="{ROW}" fill="#f7f7f7"/>')
        x = 10 + s["depth"] * INDENT
        fill = colour[s["service"]]
        out.append(f'<circle cx="{x + 4}" cy="{y + ROW / 2}" r="4" fill="{fill}"/>')
        label = escape(s["name"])
        kind = escape(s["kind"]) + (f", {escape(s['error'])}" if s["error"] else "")
        out.append(f'<text x="{x + 12}" y="{y + 15}"'
                   f'{" fill=" + chr(34) + FAILED + chr(34) if s["failed"] else ""}>{label} '
                   f'<tspan fill="#888" font-size="10">{kind}</tspan></text>')
        bar_x = LABELS + BARS * (s["start"] - begin) / total
        bar_w = max(BARS * s["duration"] / total, 1.5)
        out.append(f'<rect x="{bar_x:.1f}" y="{y + 5}" width="{bar_w:.1f}" height="{ROW - 10}" '
                   f'rx="2" fill="{FAILED if s["failed"] else fill}"><title>{escape(s["service"])}: '
                   f'{label} {millis(s["duration"])}</title></rect>')
        out.append(f'<text x="{min(bar_x + bar_w + 4, LABELS + BARS + 4):.1f}" y="{y + 15}" '
                   f'fill="#555" font-size="10">{millis(s["duration"])}</text>')
    y = TOP + ROW * len(spans) + 24
    x = 10
    for service, fill in colour.items():
        out.append(f'<circle cx="{x + 4}" cy="{y - 4}" r="4" fill="{fill}"/>')
        out.append(f'<text x="{x + 12}" y="{y}">service {escape(service)}</text>')
        x += 24 + 8 * len(service) + 60
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace", help="the query API's JSON of one trace ('-': standard input)")
    args = parser.parse_args()
    source = sys.stdin if args.trace == "-" else open(args.trace, encoding="utf-8")
    with source:
        trace_id, spans = spans_of(json.load(source))
    if not spans:
        sys.exit("trace-svg: the trace has no spans")
    sys.stdout.write(svg(trace_id, spans))


if __name__ == "__main__":
    main()
