"""Ray for a run: the running one, a cluster's at an address, or a new local one (its
workers warmed while the driver reads)."""

from __future__ import annotations

import logging
import os
import socket
import warnings
from typing import Any

from rankeval.dependencies import check_versions, install_hint
from rankeval.engines.ray.exchange import remote, warm
from rankeval.engines.ray.read import job_error
from rankeval.engines.signals import ON_SIGNAL, signal_handlers_kept
from rankeval.errors import RankevalError


def init(address: str | None = None):
    """Ray for the job: the running one (``ray.init`` called already, as in a notebook), else
    the cluster at ``address`` (``ray://host:10001``, ``host:6379``, ``auto``), else
    ``RAY_ADDRESS``'s, else a new local Ray on this machine's cores, shut down when the
    process exits. Ray's own console logs at ERROR: its session's log files keep them."""
    try:
        import ray  # optional dependency: rankeval[ray]
    except ImportError:
        raise RankevalError(f"the Ray engine needs ray: {install_hint('ray')}") from None
    check_versions("ray")
    if ray.is_initialized():
        return ray
    address = address or os.environ.get("RAY_ADDRESS") or None
    options: dict[str, Any] = dict(address=address, log_to_driver=False,
                                   logging_level=logging.ERROR)
    if address is None:
        # "local": a new Ray for the run (Ray's default would join the last cluster `ray
        # start` ran on this machine, and wait minutes for one since stopped)
        options.update(address="local", include_dashboard=False)
    else:
        _answers(address)
    try:
        with warnings.catch_warnings(), signal_handlers_kept():
            warnings.simplefilter("ignore")  # Ray Client's connection warnings: errors say
            ray.init(**options)
    except Exception as exc:  # no cluster at the address, a version mismatch
        raise RankevalError(f"Ray did not start: {job_error(exc)}") from None
    ON_SIGNAL.append(ray.shutdown)  # a signal: the local Ray's processes end with the run
    if address is None:  # a fresh local Ray: its workers import while the driver reads
        for _ in range(int(ray.cluster_resources().get("CPU", 1))):
            remote(warm).remote()
    return ray


def _answers(address: str) -> None:
    """Something listens at ``address`` (a cluster's ``host:port``), else one line at once:
    Ray itself would retry for a minute or more, its C++ client warning on stderr."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():  # "auto", "local": Ray finds the cluster itself
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=5).close()
    except OSError as exc:
        raise RankevalError(f"Ray did not start: nothing answers at {address} "
                            f"({exc.strerror or type(exc).__name__})") from None
