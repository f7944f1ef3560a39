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


def record_own(nine: str, ten: str) -> None:
    """trec_eval's own test inputs of the preference formats (copied from 10.0's test/ folder,
    with its notice: trec_eval_test/README.md) and both versions' outputs on them."""
    from tests.test_trec_eval_prefs import (
        MISSING,
        MISSING_CASES,
        OWN,
        OWN_DIR,
        OWN_FLAGS,
        own_slug,
        write_missing_dataset,
    )

    source = Path(ten).parent / "test"
    for name in {n for truth, run, _ in OWN.values() for n in (truth, run)}:
        (OWN_DIR / name).write_bytes((source / name).read_bytes())
    for old in OWN_DIR.glob("trec_eval-*.*"):
        old.unlink()
    for version, binary in (("9", nine), ("10", ten)):
        for case, (truth, run, fmt) in OWN.items():
            done = subprocess.run([binary, "-R", fmt, *OWN_FLAGS, str(OWN_DIR / truth),
                                   str(OWN_DIR / run)], capture_output=True, text=True,
                                  check=False)
            out = OWN_DIR / f"trec_eval-{version}_{own_slug(case)}"
            out.with_suffix(".txt").write_text(done.stdout)
            if done.returncode:
                out.with_suffix(".exit").write_text(
                    f"{done.returncode}\n{done.stderr.replace(str(OWN_DIR) + '/', '')}")
    write_missing_dataset()
    folder = HERE / MISSING
    for old in folder.glob("trec_eval-*.*"):
        old.unlink()
    for version, binary in (("9", nine), ("10", ten)):
        for flags in MISSING_CASES[version]:
            given = ["-R", "prefs", *flags]
            done = subprocess.run([binary, *given, str(folder / "qrels"), str(folder / "run")],
                                  capture_output=True, text=True, check=False)
            (folder / f"trec_eval-{version}{slug(given)}.txt").write_text(done.stdout)
            if done.returncode:
                (folder / f"trec_eval-{version}{slug(given)}.exit").write_text(
                    f"{done.returncode}\n{done.stderr.replace(str(folder) + '/', '')}")


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
    record_own(*sys.argv[1:])
