"""trec_eval's output: ``measure<TAB>user<TAB>value`` lines."""

from __future__ import annotations

import math
from pathlib import Path

from rankeval.compat import RELSTRING_KEY, jg_name, measure_name, output_key, relstring_name
from rankeval.errors import OptionError
from rankeval.io.formats.trec import check_field
from rankeval.presets import preset_of
from rankeval.registry import CORPUS, GEOMETRIC, REGISTRY
from rankeval.report.numbers import defined


def render(ev, per_user: bool = False, summary: bool = True) -> str:
    """trec_eval's output: ``measure<TAB>user<TAB>value``, users first (``-q``), then ``all``
    (unless not ``summary``: trec_eval's ``-n``).

    Names are trec_eval's (``P_5``, ``ndcg_cut_10``) under ``--compat trec_eval``, whose
    conventions they imply; otherwise rankeval's own (``ndcg@10``).
    """
    # under a trec_eval preset, trec_eval's names in its order (a stable sort keeps ours after)
    preset = preset_of(ev.settings.compat)
    trec = preset is not None and preset.trec_output
    specs = sorted(ev.specs, key=output_key) if trec else list(ev.specs)
    names = [measure_name(s) if trec else str(s) for s in specs]
    if trec and ev.settings.judgment_groups:  # -R qrels_jg's names: P_avgjg_5, map_avgjg
        names = [jg_name(n) for n in names]
    # z-scores (-Z): each line's name prefixed Z, every value with 4 decimals, counts too
    z = ev.zscores
    mark = "" if z is None else "Z"
    zlines = trec and z is not None
    # Counts (num_ret, num_rel, num_rel_ret) print as integers, as trec_eval prints them.
    shown = [(lambda v: f"{v:.0f}") if REGISTRY[s.name].total and z is None
             else (lambda v: f"{v:.4f}") for s in specs]
    # An undefined value (a user ild cannot score, a mean over no user) has no line, as
    # trec_eval prints none for a query it does not evaluate; the notices say why. Under a
    # trec_eval preset, a measure trec_eval computes as 0/0 there (``trec_nan``) prints its
    # -nan instead, and so does its mean over queries.
    nan = [trec and REGISTRY[s.name].trec_nan for s in specs]
    lines = []
    if per_user:  # a corpus metric has one value for the run: its 'all' line only
        # gm_map per user is the log of AP, and num_q 1: trec_eval prints neither per query
        at = [i for i, s in enumerate(specs) if REGISTRY[s.name].scope != CORPUS
              and not (trec and (REGISTRY[s.name].overall == GEOMETRIC
                                 or not REGISTRY[s.name].measured))]
        users = ev.user_id_array.to_pylist()
        # a user id trec_eval's lines cannot hold: whitespace splits a line, 'all' reads as
        # the summary
        check_field(f"{ev.inputs['predictions'].path}: the user ids", users, ("all",))
        columns = [_values(ev, specs[i], trec) for i in at]
        padded = [f"{mark}{names[i]:<22}\t" for i in at]
        formats = [shown[i] for i in at]
        # -Z under trec_eval's presets: a line for every number, its NaNs signed
        keep = [nan[i] or zlines for i in at]
        if trec and ev.settings.relstring is not None:  # a string per user, at its place
            place = sum(output_key(specs[i]) < RELSTRING_KEY for i in at)
            columns.insert(place, _relstrings(ev))
            padded.insert(place, f"{relstring_name(ev.settings.relstring):<22}\t")
            formats.insert(place, lambda v: f"'{v}'")
            keep.insert(place, True)
        nan_text = _nan if zlines else (lambda v: _NAN)  # -Z's NaNs are signed
        for user, *values in zip(users, *columns, strict=True):
            lines += [f"{p}{user}\t{f(v) if isinstance(v, str) or defined(v) else nan_text(v)}\n"
                      for p, f, v, k in zip(padded, formats, values, keep, strict=True)
                      if k or defined(v)]
    if not summary:
        return "".join(lines)
    if ev.settings.runid:  # trec_eval's first line
        lines.append(f"{'runid':<22}\tall\t{_runid(ev)}\n")
    unscored = {n.params.get("metric") for n in ev.notices if n.code in _UNSCORED}
    for spec, name, f, k in zip(specs, names, shown, nan, strict=True):
        value = ev.metrics[str(spec)]
        name = f"{mark}{name:<22}"  # padded as trec_eval: Z, then the name in 22
        if zlines:  # trec_eval's mean of the z-scores, its -1000000s in it
            value = z.trec[str(spec)]
            lines.append(f"{name:<22}\tall\t{f(value) if defined(value) else _nan(value)}\n")
        elif k and str(spec) in unscored:  # trec_eval's sum over queries holds a -nan
            lines.append(f"{name:<22}\tall\t{_NAN}\n")
        elif defined(value):
            lines.append(f"{name:<22}\tall\t{f(value)}\n")
    return "".join(lines)


def _values(ev, spec, trec: bool) -> list:
    """A metric's per-user values; as z-scores under trec_eval's presets, trec_eval's
    numbers for them (``io.zscores.zscore``: -1000000 where the file has none)."""
    if trec and ev.zscores is not None and str(spec) in ev.zscores.shown:
        return ev.zscores.shown[str(spec)].tolist()
    return ev.values(spec).tolist()


def _nan(value: float) -> str:
    """C's printf("%6.4f") of a NaN: its sign kept (-nan from 0/0, nan read from a file)."""
    return _NAN if math.copysign(1.0, value) < 0 else "   nan"


def _relstrings(ev) -> list[str]:
    if ev.relstrings is None:  # an engine that kept no strings: never printed without them
        raise OptionError("-m relstring: this engine keeps no per-user strings; use "
                          "{opt:engine} local")
    return ev.relstrings.to_pylist()


_NAN = "  -nan"  # C's printf("%6.4f") of 0.0/0.0, as trec_eval prints it
_UNSCORED = ("not_scored", "undefined")  # the notices of metrics that left users without one


def _runid(ev) -> str:
    """The run's tag (of its last line, as trec_eval reads it), else its file's name."""
    run = ev.inputs["predictions"]
    if run.tag is not None:
        return run.tag
    return "stdin" if run.path == "-" else Path(run.path).name.split(".")[0]
