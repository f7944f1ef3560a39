"""trec_eval's output: ``measure<TAB>user<TAB>value`` lines."""

from __future__ import annotations

from rankeval.registry import CORPUS, REGISTRY
from rankeval.report.numbers import defined


def render(ev, per_user: bool = False) -> str:
    """trec_eval's output: ``measure<TAB>user<TAB>value``, users first (``-q``), then ``all``.

    Names are trec_eval's (``P_5``, ``ndcg_cut_10``) under ``--compat trec_eval``, whose
    conventions they imply; otherwise rankeval's own (``ndcg@10``).
    """
    from rankeval.compat import measure_name

    names = [measure_name(s) if ev.settings.compat else str(s) for s in ev.specs]
    # Counts (num_ret, num_rel, num_rel_ret) print as integers, as trec_eval prints them.
    shown = [(lambda v: f"{v:.0f}") if REGISTRY[s.name].total else (lambda v: f"{v:.4f}")
             for s in ev.specs]
    # An undefined value (a user ild cannot score, a mean over no user) has no line, as
    # trec_eval prints none for a query it does not evaluate; the notices say why.
    lines = []
    if per_user:  # a corpus metric has one value for the run: its 'all' line only
        at = [i for i, s in enumerate(ev.specs) if REGISTRY[s.name].scope != CORPUS]
        columns = [ev.values(ev.specs[i]).tolist() for i in at]
        padded = [f"{names[i]:<22}\t" for i in at]
        formats = [shown[i] for i in at]
        for user, *values in zip(ev.user_id_array.to_pylist(), *columns, strict=True):
            lines += [f"{p}{user}\t{f(v)}\n" for p, f, v in zip(padded, formats, values,
                                                                   strict=True) if defined(v)]
    for spec, name, f in zip(ev.specs, names, shown, strict=True):
        if defined(ev.metrics[str(spec)]):
            lines.append(f"{name:<22}\tall\t{f(ev.metrics[str(spec)])}\n")
    return "".join(lines)


