"""The test suite's own machinery: what `make test` relies on to stay fast."""

from __future__ import annotations

import re
import subprocess
import sys


def test_loadgroup_keeps_a_group_on_one_worker(tmp_path):
    """`make test` runs pytest-xdist with --dist loadgroup so that the Spark tests (one
    xdist_group) share one worker and one SparkSession. pytest 9.2 broke the grouping
    silently (pytest-dev/pytest-xdist#1386): every worker then started its own session and
    the suite took longer. Run the installed pytest and xdist on a grouped module."""
    (tmp_path / "test_grouped.py").write_text(
        "import pytest\n"
        "pytestmark = pytest.mark.xdist_group('g')\n"
        "@pytest.mark.parametrize('i', range(8))\n"
        "def test_x(i):\n"
        "    pass\n"
        "def test_y():\n"
        "    pass\n")
    out = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "2",
                          "--dist", "loadgroup", "-v", "-c", "/dev/null",
                          "--rootdir", str(tmp_path), str(tmp_path / "test_grouped.py")],
                         capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    ran = re.findall(r"\[(gw\d)\] .*PASSED .*::(test_\w+)(\[\d\])?(@\w+)?", out.stdout)
    assert len(ran) == 9, out.stdout[-2000:]
    grouped = {(worker, group) for worker, _, _, group in ran}
    assert len(grouped) == 1 and grouped.pop()[1] == "@g", out.stdout[-2000:]
