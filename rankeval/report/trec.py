"""trec_eval's output: ``measure<TAB>user<TAB>value`` lines."""

from __future__ import annotations


def render(ev, per_user: bool = False) -> str:
    """trec_eval's output: ``measure<TAB>user<TAB>value``, users first (``-q``), then ``all``.

    Names are trec_eval's (``P_5``, ``ndcg_cut_10``) under ``--compat trec_eval``, whose
    conventions they imply; otherwise rankeval's own (``ndcg@10``).
    """
    from ..compat import measure_name

    names = [measure_name(s) if ev.settings.compat else str(s) for s in ev.specs]
    lines = []
    if per_user:
        columns = [ev.values(spec).tolist() for spec in ev.specs]
        padded = [f"{name:<22}\t" for name in names]
        for user, *values in zip(ev.user_id_array.to_pylist(), *columns, strict=True):
            lines += [f"{p}{user}\t{v:.4f}\n" for p, v in zip(padded, values, strict=True)]
    for spec, name in zip(ev.specs, names, strict=True):
        lines.append(_trec_line(name, "all", ev.metrics[str(spec)]))
    return "".join(lines)


def _trec_line(name: str, user: str, value: float) -> str:
    return f"{name:<22}\t{user}\t{value:.4f}\n"


