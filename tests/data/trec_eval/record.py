"""Record trec_eval's output on the generated cases, as the expected values of
tests/test_trec_eval_versions.py (figures only: trec_eval's code stays outside the repository).

Build both versions from the public source (github.com/usnistgov/trec_eval: tag v9.0.8, and
the 10.0 release commit f425365) with `make`, then:

    python tests/data/trec_eval/record.py /path/to/trec_eval-9.0.8 /path/to/trec_eval-10.0
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parents[2]))

from tests.test_trec_eval_versions import (  # noqa: E402
    CASES,
    DATASETS,
    EDGES,
    JG,
    JG_DATASETS,
    PREFS,
    slug,
    write_dataset,
    write_jg_dataset,
    write_prefs_dataset,
)
from tests.test_trec_eval_zscores import record as record_zscores  # noqa: E402


def main(nine: str, ten: str) -> None:
    for name in [*DATASETS, *EDGES]:
        write_dataset(name, HERE / name)
        for old in (HERE / name).glob("trec_eval-*.*"):  # cases since removed leave none
            old.unlink()
    for name in JG_DATASETS:
        write_jg_dataset(name, HERE / name)
        for old in (HERE / name).glob("trec_eval-*.*"):
            old.unlink()
    write_prefs_dataset(HERE / "preferences")
    for old in (HERE / "preferences").glob("trec_eval-*.*"):
        old.unlink()
    for version, binary in (("9", nine), ("10", ten)):
        prefs = [(name, [*fmt, *f]) for name, (fmt, cases) in PREFS.items() for f in cases]
        for name, flags in [*CASES[version], *JG[version], *prefs]:
            folder = HERE / name
            given = ["-R", "qrels_jg", *flags] if name in JG_DATASETS else flags
            run = subprocess.run([binary, *given, str(folder / "qrels"), str(folder / "run")],
                                 capture_output=True, text=True, check=False)
            (folder / f"trec_eval-{version}{slug(flags)}.txt").write_text(run.stdout)
            if run.returncode:  # it stopped: its status, beside what it printed before
                (folder / f"trec_eval-{version}{slug(flags)}.exit").write_text(
                    f"{run.returncode}\n{run.stderr.replace(str(folder) + '/', '')}")
    record_zscores(nine, ten)  # -Z: its files and outputs under zscores/


if __name__ == "__main__":
    main(*sys.argv[1:])
