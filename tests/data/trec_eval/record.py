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

from tests.test_trec_eval_versions import CASES, DATASETS, slug, write_dataset  # noqa: E402


def main(nine: str, ten: str) -> None:
    for name in DATASETS:
        write_dataset(name, HERE / name)
        for old in (HERE / name).glob("trec_eval-*.txt"):  # cases since removed leave none
            old.unlink()
    for version, binary in (("9", nine), ("10", ten)):
        for name, flags in CASES[version]:
            folder = HERE / name
            run = subprocess.run([binary, *flags, str(folder / "qrels"), str(folder / "run")],
                                 capture_output=True, text=True, check=True)
            (folder / f"trec_eval-{version}{slug(flags)}.txt").write_text(run.stdout)


if __name__ == "__main__":
    main(*sys.argv[1:])
