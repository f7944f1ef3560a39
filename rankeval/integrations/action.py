"""The GitHub Action (``action.yml`` at the repository's root): its inputs, given to this
module as ``RANKEVAL_*`` environment variables, become one ``rankeval`` command line, run as
the command line runs; the step's outputs and summary are written for the workflow, and the
step ends with rankeval's exit code (0, 1 for a failed gate, 2 for bad input).

``python -m rankeval.integrations.action`` is the action's step; a test can run it with the
variables a runner sets (``GITHUB_OUTPUT``, ``GITHUB_STEP_SUMMARY``) pointing at files.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from collections.abc import Mapping

from rankeval.integrations import COMMANDS

# input -> (flag, repeated: one flag per whitespace-separated value)
FLAGS = {"metrics": ("-m", False), "k": ("-k", False), "fail-under": ("--fail-under", True),
         "max-drop": ("--max-drop", True), "baseline": ("--baseline", False),
         "config": ("--config", False)}


def command_line(env: Mapping[str, str]) -> list[str]:
    """The rankeval arguments the action's inputs say (``RANKEVAL_COMMAND``,
    ``RANKEVAL_FILES``, ``RANKEVAL_METRICS`` ..., ``RANKEVAL_ARGS`` last, as a shell splits
    it); the JSON report goes to ``RANKEVAL_REPORT``."""
    command = env.get("RANKEVAL_COMMAND", "score").strip() or "score"
    if command not in COMMANDS:
        raise ValueError(f"command must be one of {', '.join(COMMANDS)}, got {command!r}")
    argv = [command, *env.get("RANKEVAL_FILES", "").split()]
    for name, (flag, repeated) in FLAGS.items():
        value = env.get(f"RANKEVAL_{name.upper().replace('-', '_')}", "").strip()
        if not value:
            continue
        if repeated:
            for part in value.split():
                argv += [flag, part]
        else:
            argv += [flag, value]
    argv += shlex.split(env.get("RANKEVAL_ARGS", ""))
    return [*argv, "-f", "json", "-o", report_path(env)]


def report_path(env: Mapping[str, str]) -> str:
    return env.get("RANKEVAL_REPORT", "").strip() or "rankeval-report.json"


def outputs(code: int, report: str) -> dict[str, str]:
    """The step's outputs: the exit code, whether every gate passed, the report's path, and
    the report's headline numbers as JSON (score: its metrics; compare: each run's means;
    ope: each run's estimates)."""
    out = {"exit-code": str(code), "passed": "true" if code == 0 else "false",
           "report": report}
    try:
        with open(report, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return out
    if "metrics" in doc:
        out["metrics"] = json.dumps(doc["metrics"])
    elif "runs" in doc and doc["runs"] and "estimates" in doc["runs"][0]:
        out["metrics"] = json.dumps({r["name"]: {k: e["value"] for k, e in r["estimates"].items()}
                                     for r in doc["runs"]})
    elif "runs" in doc:
        out["metrics"] = json.dumps({r.get("name"): r.get("metrics") for r in doc["runs"]})
    return out


def write_outputs(values: dict[str, str], env: Mapping[str, str]) -> None:
    """Append ``name=value`` lines to the file GITHUB_OUTPUT names (a value on one line)."""
    path = env.get("GITHUB_OUTPUT")
    if not path:
        return
    with open(path, "a", encoding="utf-8") as f:
        for name, value in values.items():
            f.write(f"{name}={value.replace(chr(10), ' ')}\n")


def main(env: Mapping[str, str] = os.environ) -> int:
    try:
        argv = command_line(env)
    except ValueError as exc:
        print(f"rankeval: error: {exc}", file=sys.stderr)
        return 2
    print("rankeval " + " ".join(shlex.quote(a) for a in argv), file=sys.stderr)
    code = subprocess.run([sys.executable, "-m", "rankeval", *argv], check=False,
                          env=dict(env)).returncode
    write_outputs(outputs(code, report_path(env)), env)
    return code


if __name__ == "__main__":
    sys.exit(main())
