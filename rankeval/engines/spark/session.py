"""The Spark session for a run: the active one, spark-submit's, Spark Connect's, or a new
local one (its log4j configuration beside this file keeps stderr for rankeval's lines), and
a failed job's error on one line."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable
from pathlib import Path

from rankeval.dependencies import check_versions, install_hint
from rankeval.engines.signals import signal_handlers_kept
from rankeval.errors import RankevalError


def session(master: str | None = None, conf: Iterable[tuple[str, str]] = ()):
    """The active SparkSession (a notebook), else one on the master spark-submit was given,
    else Spark Connect when ``SPARK_REMOTE`` is set, else a new local one (``master``,
    default ``local[*]``) whose Python workers run this interpreter (which has rankeval and
    pyarrow)."""
    try:
        from pyspark.sql import SparkSession  # optional dependency: rankeval[spark]
    except ImportError:
        raise RankevalError(f"the Spark engine needs pyspark: {install_hint('spark')}"
                            ) from None
    check_versions("spark")
    active = SparkSession.getActiveSession()
    if active is not None and master is None:
        for key, value in conf:
            try:
                active.conf.set(key, value)
            except Exception as exc:  # a setting fixed when the session started
                raise RankevalError(f"--spark-conf {key}: {job_error(exc)}") from None
        return active
    builder = SparkSession.builder
    if master is None and os.environ.get("SPARK_REMOTE"):
        builder = builder.remote(os.environ["SPARK_REMOTE"])
    elif master is None and os.environ.get("PYSPARK_GATEWAY_PORT"):
        pass  # under spark-submit: its --master and --conf stand
    else:
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        log = Path(__file__).with_name("log4j2.properties")  # stderr is for rankeval's lines
        builder = builder.master(master or "local[*]").appName("rankeval").config(
            "spark.ui.showConsoleProgress", "false").config(
            "spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={log.as_uri()}")
    for key, value in conf:
        builder = builder.config(key, value)
    try:
        with signal_handlers_kept():
            return builder.getOrCreate()
    except Exception as exc:  # no Java, a wrong master URL, an unreachable Connect server
        raise RankevalError(f"Spark did not start: {job_error(exc)} (the Spark engine needs "
                            "a Java 17+ runtime: 'make java' checks for one)") from None


def job_error(exc: BaseException) -> str:
    """The useful line of a failed Spark job: the innermost cause Spark names (a malformed
    CSV record, a file it cannot read), without the exception class."""
    text = str(getattr(exc, "desc", None) or exc)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    causes = [line.partition("Caused by: ")[2] for line in lines if "Caused by: " in line]
    for line in [*reversed(causes), *lines]:
        if "Error:" in line or "Exception:" in line or line.startswith("["):
            message = re.sub(r"^[\w.$]+(Error|Exception): ", "", line).strip(" :")
            return message[:500]
    return (lines[0] if lines else type(exc).__name__)[:500]
