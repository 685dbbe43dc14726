"""Assistants as programs of their own, written in the tests: they speak the assistant protocol
(JSON lines on standard input and output) in Python, JavaScript (Node.js) and POSIX shell."""

from __future__ import annotations

import textwrap

SEARCHER = textwrap.dedent('''
    """Measures the first part, then names one part after the other; logs every line it reads and writes."""
    import json, sys

    log = open(sys.argv[1], "a", encoding="utf-8")
    mode = sys.argv[2]          # search: hypotheses after the measurement; measure: measurements only

    def receive():
        line = sys.stdin.readline()
        log.write("in " + line)
        log.flush()
        return json.loads(line) if line else None

    def send(message):
        text = json.dumps(message)
        log.write("out " + text + "\\n")
        log.flush()
        sys.stdout.write(text + "\\n")
        sys.stdout.flush()

    brief = receive()
    parts = sorted(p for p, kind in brief["parts"].items() if kind not in ("enclosure", "opening"))
    measure = {"kind": "act", "action": "measure_voltage", "targets": [parts[0]]}
    send(dict(measure, candidates=[[p] for p in parts[:3]]))
    while True:
        message = receive()
        if message is None or message["kind"] == "end":
            break
        if mode == "measure":
            send(measure)
        elif parts:
            send({"kind": "hypothesis", "parts": [parts.pop(0)], "explanation": "the next part in line"})
        else:
            send({"kind": "stop"})
''')

NODE_SEARCHER = textwrap.dedent('''
    // Names one part after the other, in name order; gives up when none is left.
    const readline = require("readline");
    const lines = readline.createInterface({ input: process.stdin });
    let parts = [];
    const send = (message) => process.stdout.write(JSON.stringify(message) + "\\n");
    lines.on("line", (line) => {
      const message = JSON.parse(line);
      if (message.kind === "end") { lines.close(); return; }
      if (message.kind === "briefing") {
        parts = Object.keys(message.parts).filter((p) => !["enclosure", "opening"].includes(message.parts[p])).sort();
      }
      send(parts.length ? { kind: "hypothesis", parts: [parts.shift()] } : { kind: "stop" });
    });
''')

SH_STOPPER = textwrap.dedent('''\
    read -r briefing
    printf '%s\\n' '{"kind": "stop"}'
    read -r end
''')
