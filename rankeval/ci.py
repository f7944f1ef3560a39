"""Reports for CI systems: JUnit XML (one test case per gate) and GitHub's step summary."""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET

from .evaluation import Evaluation
from .report import render_markdown

STEP_SUMMARY = "GITHUB_STEP_SUMMARY"


def render_junit(ev: Evaluation, name: str = "rankeval") -> str:
    """JUnit XML: a test suite with a test case per gate; failed gates carry the message."""
    failures = sum(not v.passed for v in ev.verdicts)
    suite = ET.Element(
        "testsuite",
        name=name,
        tests=str(len(ev.verdicts)),
        failures=str(failures),
        errors="0",
        skipped="0",
    )
    props = ET.SubElement(suite, "properties")
    for metric, value in ev.metrics.items():
        ET.SubElement(props, "property", name=metric, value=repr(value))
    for v in ev.verdicts:
        case = ET.SubElement(
            suite, "testcase", classname=f"{name}.{v.gate.kind}", name=f"{v.metric} {v.condition()}"
        )
        if not v.passed:
            failure = ET.SubElement(case, "failure", message=v.message(), type="GateFailed")
            failure.text = v.message()
    ET.indent(suite)
    body = ET.tostring(suite, encoding="unicode")
    return f'<?xml version="1.0" encoding="utf-8"?>\n{body}\n'


def append_step_summary(ev: Evaluation, environ=os.environ) -> str | None:
    """Append the Markdown summary to the file named by GITHUB_STEP_SUMMARY, if it is set."""
    path = environ.get(STEP_SUMMARY)
    if not path:
        return None
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(render_markdown(ev) + "\n")
    return path
