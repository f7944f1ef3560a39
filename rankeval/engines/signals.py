"""What a run cut short by a signal lets go of, and a cluster client kept from replacing the
caller's signal handlers (the command line's, ``cli/process.py``)."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator

# What a run cut short by a signal lets go of before the process ends (a local Ray's
# processes, which outlive a driver that ends without ``ray.shutdown``): the command line's
# signal handling calls each, for a second or two at most (``cli/process.py``).
ON_SIGNAL: list[Callable[[], None]] = []


@contextlib.contextmanager
def signal_handlers_kept() -> Iterator[None]:
    """A cluster's client started in the block (``ray.init`` sets SIGTERM to ``sys.exit(15)``,
    a SparkContext SIGINT to its own) must not replace the handlers a caller had set (the
    command line's: exit 128 + the signal, what the run started let go of): while the block
    runs, ``signal.signal`` leaves those signals alone (a signal that comes meanwhile is the
    caller's to handle). Signals left at their default take the client's handlers (a
    script's Ray then cleans up after itself)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    kept = {s: h for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
            if callable(h := signal.getsignal(s)) and h is not signal.default_int_handler}
    if not kept:
        yield
        return
    real = signal.signal

    def leave_kept(signum, handler):
        return kept[signum] if signum in kept else real(signum, handler)

    signal.signal = leave_kept
    try:
        yield
    finally:
        signal.signal = real
        for sig, handler in kept.items():  # set at C level by a library: Python's again
            real(sig, handler)
