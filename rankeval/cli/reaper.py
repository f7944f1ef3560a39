"""What ends the processes a command cut short by a signal had started, when SIGTERM did not:
``python -I -S reaper.py SECONDS PID:START ...`` outlives the command and sends SIGKILL to each
process still there after SECONDS. It imports nothing of rankeval, so that it starts in
milliseconds. (One of a local Ray's processes outlived SIGTERM by a minute on a loaded
machine; a JVM's shutdown hooks may take as long.)"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time


def stat_fields(pid: int | str) -> list[bytes] | None:
    """The fields of ``/proc/PID/stat`` after the command's name (the state first, then the
    parent's number, ...; the name, in parentheses, may hold spaces), None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()
    except OSError:
        return None


def started(pid: int) -> str | None:
    """When process ``pid`` started (clock ticks since boot), None once it is gone or a
    zombie. With its number, what tells a process from a later one given the same number."""
    fields = stat_fields(pid)
    return None if fields is None or fields[0] in (b"Z", b"X") else fields[19].decode()


def still_there(processes: dict[int, str]) -> dict[int, str]:
    """The processes of ``processes`` (number: start) not ended: a number the system has given
    again to another process is not one of them."""
    return {pid: at for pid, at in processes.items() if started(pid) == at}


def reap(seconds: float, processes: dict[int, str]) -> None:
    """Wait up to ``seconds`` for ``processes`` to end; SIGKILL to those that have not."""
    end = time.monotonic() + seconds
    while processes and time.monotonic() < end:
        time.sleep(0.1)
        processes = still_there(processes)
    for pid in processes:
        with contextlib.suppress(OSError):  # ended meanwhile
            os.kill(pid, signal.SIGKILL)


if __name__ == "__main__":
    reap(float(sys.argv[1]), {int(p): at for p, _, at in (a.partition(":") for a in sys.argv[2:])})
