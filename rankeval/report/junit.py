"""JUnit XML for CI systems: a test suite with one test case per gate."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from rankeval.report.numbers import exact


def render(ev, name: str = "rankeval") -> str:
    """JUnit XML: a test suite with a test case per gate; failed gates carry the message."""
    failures = sum(not v.passed for v in ev.gates.verdicts)
    suite = ET.Element(
        "testsuite",
        name=name,
        tests=str(len(ev.gates.verdicts)),
        failures=str(failures),
        errors="0",
        skipped="0",
    )
    props = ET.SubElement(suite, "properties")
    if ev.settings.config:  # where the gates may have come from (no metric has a dot in it)
        ET.SubElement(props, "property", name="rankeval.config", value=ev.settings.config)
    for metric, value in ev.metrics.items():
        ET.SubElement(props, "property", name=metric,
                      value=exact(value) or "undefined")  # SPEC section 9
    for v in ev.gates.verdicts:
        case = ET.SubElement(
            suite, "testcase", classname=f"{name}.{v.gate.kind}", name=f"{v.metric} {v.condition()}"
        )
        if not v.passed:
            failure = ET.SubElement(case, "failure", message=v.message(), type="GateFailed")
            failure.text = v.message()
    ET.indent(suite)
    body = ET.tostring(suite, encoding="unicode")
    return f'<?xml version="1.0" encoding="utf-8"?>\n{body}\n'
