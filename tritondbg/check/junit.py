"""JUnit XML of a `tritondbg check` run, written from the same outcomes as the table and the JSON (so every
requested kernel x gate is in all three, including the items that crashed, timed out or were interrupted)."""
from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from tritondbg.check.outcome import ERROR, FAIL, INTERRUPTED, SKIP, GateOutcome


def write_junit(path: str | Path, outcomes: list[GateOutcome], *, suite: str = "tritondbg") -> None:
    count = {s: sum(o.status == s for o in outcomes) for s in (FAIL, SKIP, ERROR, INTERRUPTED)}
    root = ET.Element("testsuites")
    ts = ET.SubElement(root, "testsuite", name=suite, tests=str(len(outcomes)), failures=str(count[FAIL]),
                       errors=str(count[ERROR] + count[INTERRUPTED]), skipped=str(count[SKIP]),
                       time=f"{sum(o.seconds for o in outcomes):.3f}")
    for o in outcomes:
        tc = ET.SubElement(ts, "testcase", classname=o.kernel, name=o.gate, time=f"{o.seconds:.3f}")
        text = o.reason + (f"\nreproduce: {o.command}" if o.command else "")
        if o.status == FAIL:
            ET.SubElement(tc, "failure", message=o.reason, type="gate").text = text
        elif o.status == SKIP:
            ET.SubElement(tc, "skipped", message=o.reason)
        elif o.status == ERROR:
            kind = "timeout" if o.reason.startswith("timed out") else "crashed"
            ET.SubElement(tc, "error", message=o.reason, type=kind).text = text
        elif o.status == INTERRUPTED:
            ET.SubElement(tc, "error", message=o.reason, type="interrupted").text = text
        elif o.reason:  # a pass's reason and its caveats (cases not compiled, warnings named): helper-85, a CI
            ET.SubElement(tc, "system-out").text = o.reason  # reading the XML saw a plain green
    ET.indent(root)
    Path(path).write_text(ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n")
