"""trec_eval's output: ``measure<TAB>user<TAB>value`` lines."""

from __future__ import annotations

from ..registry import REGISTRY


def render(ev, per_user: bool = False) -> str:
    """trec_eval's output: ``measure<TAB>user<TAB>value``, users first (``-q``), then ``all``.

    Names are trec_eval's (``P_5``, ``ndcg_cut_10``) under ``--compat trec_eval``, whose
    conventions they imply; otherwise rankeval's own (``ndcg@10``).
    """
    from ..compat import measure_name

    names = [measure_name(s) if ev.settings.compat else str(s) for s in ev.specs]
    # Counts (num_ret, num_rel, num_rel_ret) print as integers, as trec_eval prints them.
    shown = [(lambda v: f"{v:.0f}") if REGISTRY[s.name].total else (lambda v: f"{v:.4f}")
             for s in ev.specs]
    lines = []
    if per_user:
        columns = [ev.values(spec).tolist() for spec in ev.specs]
        padded = [f"{name:<22}\t" for name in names]
        for user, *values in zip(ev.user_id_array.to_pylist(), *columns, strict=True):
            lines += [f"{p}{user}\t{f(v)}\n" for p, f, v in zip(padded, shown, values,
                                                                   strict=True)]
    for spec, name, f in zip(ev.specs, names, shown, strict=True):
        lines.append(f"{name:<22}\tall\t{f(ev.metrics[str(spec)])}\n")
    return "".join(lines)


