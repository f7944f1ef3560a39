"""The one rule every output path passes, before any work: no output may be an input, a
configuration file, another output or the file GITHUB_STEP_SUMMARY names, and no stream (a
FIFO, a device, standard input) may be read twice.

Files are compared by what they are, not by how they are named: two names of one file (a
symlink, a hard link, ``./x`` and ``x``, ``/dev/stdin`` and ``-``) have one identity, the
(device, inode) pair ``os.stat`` gives; a file that does not exist yet is known by its
resolved path. Devices (``/dev/null``) may take any number of outputs.

The command line's commands name their files in the parameters listed here (``INPUTS``,
``OUTPUTS``); the boundary (``cli.app``) passes every command's through ``check_command``.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Sequence

from rankeval.errors import OptionError

STDIO = "-"
SUMMARY = "GITHUB_STEP_SUMMARY"

# Parameters of the commands that name files they read ...
INPUTS = ("predictions", "truth", "files", "runs", "log", "source", "train", "catalog",
          "item_features", "item_groups", "propensity", "segments", "baseline",
          "baseline_per_user", "reward_model", "per_user_a", "per_user_b", "gold", "exclude",
          "candidates_file", "old_truth", "zscores")
# ... and files they write.
OUTPUTS = ("output", "per_user", "junit", "html", "per_context", "target")
# ... and arguments that are words, not files: a metric's name, a command and its options.
WORDS = ("name", "command", "args")
# Files the command line reads its options from, in the working directory (cli/config.py's
# CANDIDATES); an explicit --config FILE is one too.
CONFIGS = ("rankeval.toml", "pyproject.toml")


def _flag(name: str) -> str:
    return {"output": "--output", "target": "OUT"}.get(name, "--" + name.replace("_", "-"))


def _values(value) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str | os.PathLike):
        return [os.fspath(value)]
    return [os.fspath(v) for v in value if v is not None]


def check_command(params: dict, configs: Iterable[str] = (), summary: str | None = None,
                  labels: dict[str, str] | None = None) -> None:
    """The rule for one command's parsed parameters (``ctx.params``): its inputs and outputs
    from ``INPUTS`` and ``OUTPUTS``, ``configs`` the configuration files it read,
    ``summary`` the step summary it will append to (None: it writes none); ``labels``: how
    the command names each parameter (``PREDS``, ``--train``)."""
    named = labels or {}
    inputs = [(named.get(name) or _flag(name), path) for name in INPUTS
              for path in _values(params.get(name))]
    outputs = [(named.get(name) or _flag(name), path) for name in OUTPUTS
               for path in _values(params.get(name))]
    check(inputs, outputs, configs, summary)


def check(inputs: Sequence[tuple[str, str]], outputs: Sequence[tuple[str, str]],
          configs: Iterable[str] = (), summary: str | None = None) -> None:
    """Raise an ``OptionError`` naming the first output that is an input, a configuration
    file, another output or the step summary's file, or the first stream read twice.
    ``inputs`` and ``outputs`` are (flag, path) pairs; ``-`` is standard input or output."""
    seen: dict[object, str] = {}
    streams: dict[object, str] = {}
    for flag, path in inputs:
        if _remote(path):
            continue
        key = _identity(path, reading=True)
        if _is_stream(path, reading=True):
            if key in streams:
                raise OptionError(f"{flag} {_shown(path)}: is {streams[key]} too, a stream "
                                  "that can be read only once; give each input its own file")
            streams[key] = f"the input {_shown(path)}"
        seen.setdefault(key, f"the input {_shown(path)}")
    for config in {*configs, *(c for c in CONFIGS if os.path.isfile(c))}:
        seen.setdefault(_identity(config), f"the configuration file {config}")
    if summary and not _is_device(summary):
        key = _identity(summary)
        if key in seen:
            raise OptionError(f"{SUMMARY} {summary}: is {seen[key]}; the step summary "
                              "is appended to: point it at another file")
        seen[key] = f"the step summary's file ({SUMMARY})"
    for flag, path in outputs:
        if path == STDIO or _remote(path) or _is_device(path):
            continue
        key = _identity(path)
        if key in seen:
            raise OptionError(f"{flag} {path}: is {seen[key]}; write to another file")
        seen[key] = f"the output of {flag}"


def _shown(path: str) -> str:
    return "<stdin>" if path == STDIO else path


def _remote(path: str) -> bool:
    return "://" in path  # a cluster's filesystem (s3a://, hdfs://): not this machine's


def _stat(path: str, reading: bool = False) -> os.stat_result | None:
    try:
        return os.fstat(0) if reading and path == STDIO else os.stat(path)
    except (OSError, ValueError):
        return None


def _identity(path: str, reading: bool = False) -> object:
    """The same object for every name of one file: (device, inode) when it exists."""
    st = _stat(path, reading)
    if st is not None:
        return (st.st_dev, st.st_ino)
    return ("new", os.path.realpath(path))


def _is_device(path: str) -> bool:
    st = _stat(path)
    return st is not None and (stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode))


def _is_stream(path: str, reading: bool = False) -> bool:
    """A FIFO, a socket or a device: what is read from it is gone."""
    if reading and path == STDIO:
        return True
    st = _stat(path, reading)
    if st is None:
        return False
    return not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode))
