"""trec_eval's output: ``measure<TAB>user<TAB>value`` lines."""

from __future__ import annotations

from pathlib import Path

from rankeval.registry import CORPUS, GEOMETRIC, REGISTRY
from rankeval.report.numbers import defined


def render(ev, per_user: bool = False, summary: bool = True) -> str:
    """trec_eval's output: ``measure<TAB>user<TAB>value``, users first (``-q``), then ``all``
    (unless not ``summary``: trec_eval's ``-n``).

    Names are trec_eval's (``P_5``, ``ndcg_cut_10``) under ``--compat trec_eval``, whose
    conventions they imply; otherwise rankeval's own (``ndcg@10``).
    """
    from rankeval.compat import measure_name, output_key

    # under compat, trec_eval's names in its order (a stable sort keeps ours after)
    trec = ev.settings.compat in ("trec_eval", "trec_eval-9")
    specs = sorted(ev.specs, key=output_key) if trec else list(ev.specs)
    names = [measure_name(s) if trec else str(s) for s in specs]
    # Counts (num_ret, num_rel, num_rel_ret) print as integers, as trec_eval prints them.
    shown = [(lambda v: f"{v:.0f}") if REGISTRY[s.name].total else (lambda v: f"{v:.4f}")
             for s in specs]
    # An undefined value (a user ild cannot score, a mean over no user) has no line, as
    # trec_eval prints none for a query it does not evaluate; the notices say why.
    lines = []
    if per_user:  # a corpus metric has one value for the run: its 'all' line only
        # gm_map per user is the log of AP, and num_q 1: trec_eval prints neither per query
        at = [i for i, s in enumerate(specs) if REGISTRY[s.name].scope != CORPUS
              and not (trec and (REGISTRY[s.name].overall == GEOMETRIC
                                               or s.name == "num_q"))]
        columns = [ev.values(specs[i]).tolist() for i in at]
        padded = [f"{names[i]:<22}\t" for i in at]
        formats = [shown[i] for i in at]
        for user, *values in zip(ev.user_id_array.to_pylist(), *columns, strict=True):
            lines += [f"{p}{user}\t{f(v)}\n" for p, f, v in zip(padded, formats, values,
                                                                   strict=True) if defined(v)]
    if not summary:
        return "".join(lines)
    if ev.settings.runid:  # trec_eval's first line
        lines.append(f"{'runid':<22}\tall\t{_runid(ev)}\n")
    for spec, name, f in zip(specs, names, shown, strict=True):
        if defined(ev.metrics[str(spec)]):
            lines.append(f"{name:<22}\tall\t{f(ev.metrics[str(spec)])}\n")
    return "".join(lines)


def _runid(ev) -> str:
    """The run's tag (of its last line, as trec_eval reads it), else its file's name."""
    run = ev.inputs["predictions"]
    if run.tag is not None:
        return run.tag
    return "stdin" if run.path == "-" else Path(run.path).name.split(".")[0]
