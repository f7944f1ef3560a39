"""The process around a command: its exit status is decided, then said, and every catchable
signal ends it within a second without leaving a temporary file.

- **stderr cannot bend the status.** While a command runs, ``sys.stderr`` is ``Said``: a write
  or flush that fails (a pipe closed early, ``2>/dev/full``, a closed descriptor) is dropped,
  and the descriptor is pointed at /dev/null so that later writes (the interpreter's last
  flush included) succeed. A failing gate stays 1, an error 2, a success 0.
- **Signals.** Every signal whose default action ends the process, and that the process does
  not ignore, is caught (``TERMINATING``). The Python handler raises ``Terminated`` in the main
  thread, so that the command unwinds and removes what it was writing. A Python handler only
  runs between bytecodes, never during a long numpy, scipy or Arrow call (a correction table
  can be one call of minutes), so the signal is also written to a wakeup pipe that a watchdog
  thread reads: ``GRACE`` seconds later, if the process is still there, the watchdog removes
  every temporary output (``rankeval.io.output.pending``), says the one line, and ends the
  process with 128 + the signal's number. The long calls release the GIL, so the watchdog runs.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, TextIO

from rankeval.cli import reaper
from rankeval.cli.memory import retain_freed_memory
from rankeval.engines.signals import ON_SIGNAL

GRACE = 0.5  # seconds the command has to unwind by itself after a signal
_WATCHDOG_STACK = 256 << 10
HOOK_TIME = 2.0  # seconds each ``ON_SIGNAL`` hook (a cluster let go) may take
REAP_TIME = 5.0  # seconds a process this one started has, after SIGTERM, before SIGKILL

# Signals whose default action ends the process but which are not caught: synchronous faults
# (the process cannot go on after them: faulthandler reports them) and the uncatchable.
_NOT_CAUGHT = {"SIGKILL", "SIGSTOP", "SIGSEGV", "SIGBUS", "SIGFPE", "SIGILL", "SIGTRAP",
               "SIGSYS", "SIGABRT", "SIGIOT"}
# Signals whose default action does not end the process.
_HARMLESS = {"SIGCHLD", "SIGCLD", "SIGCONT", "SIGTSTP", "SIGTTIN", "SIGTTOU", "SIGURG",
             "SIGWINCH"}


def terminating() -> list[signal.Signals]:
    """The named signals that end the process by default and can be caught: SIGHUP, SIGINT,
    SIGQUIT, SIGTERM, SIGUSR1, SIGALRM, SIGXCPU, ... (SIGPIPE and SIGXFSZ, which Python
    ignores, are left out below by their disposition, as is SIGHUP under ``nohup``)."""
    return [s for s in signal.Signals
            if s.name not in _NOT_CAUGHT | _HARMLESS and not s.name.startswith("SIGRT")]


def message(signum: int) -> str:
    """The one line a signal ends a run with (without the ``rankeval: error:`` prefix)."""
    if signum == signal.SIGINT:
        return "interrupted"
    if signum == signal.SIGTERM:
        return "terminated"
    return f"terminated by {signal.Signals(signum).name}"


def _quietly(hook: Callable[[], None]) -> None:
    with contextlib.suppress(BaseException):
        hook()


class Terminated(BaseException):
    """A signal, raised where the main thread is, so that half-written outputs are removed."""

    def __init__(self, signum: int = signal.SIGTERM):
        super().__init__(signum)
        self.signum = signum

    @property
    def code(self) -> int:
        return 128 + self.signum


class Said:
    """A text stream whose writes never fail: once the stream is lost, what is said is
    dropped. The process's own stderr is then pointed at /dev/null, so that every later write
    to descriptor 2 (Python's last flush, a library's) succeeds too."""

    def __init__(self, stream: TextIO):
        self._stream = stream
        self.lost = False

    def write(self, text: str) -> int:
        if not isinstance(text, str):  # a text stream (click asks by writing bytes)
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        if not self.lost:
            try:
                self._stream.write(text)
            except (OSError, ValueError):  # EPIPE, ENOSPC, EBADF, a closed file
                self._lose()
        return len(text)

    def flush(self) -> None:
        if not self.lost:
            try:
                self._stream.flush()
            except (OSError, ValueError):
                self._lose()

    def _lose(self) -> None:
        self.lost = True
        try:
            fd = self._stream.fileno()
        except (AttributeError, ValueError, OSError):
            return  # an in-memory stream (tests): nothing below it to repair
        if fd != 2:
            return
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, fd)
        os.close(devnull)
        with contextlib.suppress(OSError, ValueError):
            self._stream.flush()  # what was buffered goes to /dev/null now

    def isatty(self) -> bool:
        try:
            return not self.lost and self._stream.isatty()
        except (OSError, ValueError):
            return False

    def __getattr__(self, name: str) -> Any:  # encoding, errors, fileno, buffer ...
        return getattr(self._stream, name)


@contextlib.contextmanager
def said_stderr() -> Iterator[Said]:
    """``sys.stderr`` as ``Said`` for the block (the original back after it, flushed)."""
    original = sys.stderr
    if original is None:  # started with stderr closed (2>&-)
        devnull = open(os.devnull, "w")  # noqa: SIM115 (the process's stderr from now on)
        original = devnull
    stream = original if isinstance(original, Said) else Said(original)
    sys.stderr = stream
    try:
        yield stream
    finally:
        stream.flush()
        sys.stderr = original


class Signals:
    """Catching the terminating signals for one command (see the module's docstring).
    ``cleanup`` removes what an unfinished run leaves (temporary outputs); ``say`` writes
    the one line. Installed only on the main thread (a signal handler must be set there)."""

    def __init__(self, cleanup: Callable[[], None], say: Callable[[str], None]):
        self._cleanup, self._say = cleanup, say
        self._previous: dict[int, Any] = {}
        self._wakeup: int | None = None
        self._pipe: tuple[int, int] | None = None
        self._watchdog: threading.Thread | None = None
        self._lock = threading.Lock()
        self.received: int | None = None  # the first signal, seen by the handler or the watchdog
        self._raised = False  # the handler has raised ``Terminated`` (once)
        self.said = False
        self._closing = False

    def install(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        for sig in terminating():
            try:
                if signal.getsignal(sig) == signal.SIG_IGN:  # nohup, Python's SIGPIPE
                    continue
                self._previous[sig] = signal.signal(sig, self._on_signal)
            except (OSError, ValueError):  # not catchable on this system
                continue
        read, write = os.pipe()
        os.set_blocking(write, False)  # the C handler must never block
        self._pipe = (read, write)
        self._wakeup = signal.set_wakeup_fd(write, warn_on_full_buffer=False)
        self._watchdog = threading.Thread(target=self._watch, args=(read,),
                                          name="rankeval-signals", daemon=True)
        # A small stack, and glibc's one heap (a thread's first allocation would otherwise
        # reserve an arena of 64 MiB): under an address-space limit (ulimit -v) both would be
        # taken from what the run's own allocations may use. The command line sets the heap
        # up so for every run (cli/memory.py); this thread only comes first.
        retain_freed_memory()
        size = threading.stack_size(_WATCHDOG_STACK)
        try:
            self._watchdog.start()
        finally:
            threading.stack_size(size)

    def restore(self) -> None:
        """Put back the handlers found (an in-process caller's, a test runner's). After a
        signal the watchdog stays: it ends the process should its exit hang."""
        self._closing = True  # a signal from here on is the watchdog's alone
        if self._pipe is None or self.received is not None:
            return
        signal.set_wakeup_fd(self._wakeup if self._wakeup is not None else -1)
        for sig, handler in self._previous.items():
            if handler is not None:  # None: set outside Python, cannot be put back
                signal.signal(sig, handler)
        _, write = self._pipe
        self._pipe = None
        os.close(write)  # the watchdog reads the end of the pipe, closes it and returns
        if self._watchdog is not None:
            self._watchdog.join(5)  # no daemon thread outlives the command (tests/test_stress.py)

    def _on_signal(self, signum: int, frame) -> None:
        # Its own flag, not ``received``: the watchdog may read the wakeup pipe first (the main
        # thread in a call that releases the GIL), and the command must still unwind rather
        # than go on writing outputs until the watchdog ends the process.
        if not self._raised:  # once: a second signal must not cut the unwinding
            self._raised = True
            self.received = self.received or signum
            if not self._closing:
                raise Terminated(signum)

    def say_once(self, signum: int) -> None:
        with self._lock:
            if not self.said:
                self.said = True
                self._say(message(signum))

    def _watch(self, read: int) -> None:
        caught = {int(s) for s in self._previous}
        try:
            while True:
                data = os.read(read, 64)
                if not data:
                    return  # restored: the command ended without a signal
                signums = [n for n in data if n in caught]
                if signums:
                    break
        finally:
            os.close(read)
        self.received = self.received or signums[0]
        threading.Event().wait(GRACE)
        self._end(signums[0])

    def abandon(self) -> None:
        """What a run cut short by a signal leaves is let go of: its temporary outputs
        removed, each ``engines.ON_SIGNAL`` hook run (a local Ray shut down), and the
        processes it started (a Spark JVM still starting, which would outlive it) ended:
        those found before the hooks ran too (a Ray worker whose raylet the shutdown ended
        is no longer below this process)."""
        started: dict[int, str] = {}
        if self.received is not None:  # a real signal (not an in-process test's exception)
            with contextlib.suppress(BaseException):
                started = _started(descendants(os.getpid()))
        with contextlib.suppress(BaseException):
            self._cleanup()
        for hook in list(ON_SIGNAL):  # each on a thread of its own: none may hold the exit
            worker = threading.Thread(target=_quietly, args=(hook,), daemon=True)
            worker.start()
            worker.join(HOOK_TIME)
        if self.received is not None:
            with contextlib.suppress(BaseException):
                _end_children(started)

    def _end(self, signum: int) -> None:
        """The process is still there ``GRACE`` after a signal: end it from here."""
        self.abandon()
        with contextlib.suppress(BaseException):
            self.say_once(signum)
        with contextlib.suppress(BaseException):
            sys.stderr.flush()
        with contextlib.suppress(BaseException):
            self._cleanup()  # again: one the main thread was creating as the first pass ran
        os._exit(128 + signum)


def _end_children(found: dict[int, str]) -> None:
    """SIGTERM to every process this one started, and theirs (a local Ray's raylet starts
    agents of its own), and to those of ``found`` (number: start) still there; Linux: from
    /proc, elsewhere none are known. Those still there a moment later are left to a reaper
    of their own, which outlives this process: SIGKILL to any that has not ended
    ``REAP_TIME`` seconds on (one of a local Ray's processes outlived SIGTERM by a minute on
    a loaded machine)."""
    processes = reaper.still_there(found) | _started(descendants(os.getpid()))
    for pid in processes:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGTERM)
    end = time.monotonic() + 0.2
    while processes and time.monotonic() < end:
        time.sleep(0.02)
        processes = reaper.still_there(processes)
    if processes:
        subprocess.Popen(
            [sys.executable, "-I", "-S", reaper.__file__, str(REAP_TIME),
             *(f"{pid}:{at}" for pid, at in processes.items())],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True)


def _started(pids: list[int]) -> dict[int, str]:
    """Each process of ``pids`` still there, with when it started (``reaper.started``)."""
    return {pid: at for pid in pids if (at := reaper.started(pid)) is not None}


def descendants(root: int) -> list[int]:
    """The processes below ``root`` (children first), from /proc; [] where there is none."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        fields = reaper.stat_fields(entry) if entry.isdigit() else None
        if fields is not None:
            parents[int(entry)] = int(fields[1])  # ppid, after the state
    out, level = [], [root]
    while level:
        level = [pid for pid, parent in parents.items() if parent in level]
        out += level
    return out
