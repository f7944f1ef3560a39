"""What a metric is: the fields of a registry row, and the words they take."""

from __future__ import annotations

from dataclasses import dataclass

PER_USER = "per_user"  # a value per user; the overall value is their mean
CORPUS = "corpus"  # one value for the whole run (coverage, Gini): not a mean over users
MEAN, SUM, GEOMETRIC = "mean", "sum", "geometric"
# Inputs a metric may need beyond the predictions and the truth.
INPUTS = ("interactions", "item_features", "catalog", "subtopics", "item_groups", "propensity")


@dataclass(frozen=True)
class Metric:
    """A metric's definition; its kernel in ``kernels/metrics.py`` has the same name."""

    name: str
    aliases: tuple[str, ...]
    summary: str
    formula: str
    bounded: bool = True  # value always in [0, 1]
    signed: bool = False  # may be negative (utility); every other metric is >= 0
    cutoff: bool = True  # takes a K (``ndcg@10``, ``ndcg@all``); r_precision cuts at R instead
    needs: frozenset[str] = frozenset()  # extra inputs, from INPUTS
    scope: str = PER_USER
    # How per-user values make the overall value: their mean; their sum (trec_eval's num_*);
    # or exp of their mean, the per-user values being logs (trec_eval's gm_map).
    overall: str = MEAN
    at: str = "all"  # the summary column of a metric without a cut-off: the whole list, or R
    # A metric measured at levels instead of cut-offs (``iprec@0.5``): the levels a bare name
    # expands to, and the interval a level must lie in.
    levels: tuple[float, ...] = ()
    level_range: tuple[float, float] = (0.0, 1.0)
    judgements: bool = False  # reads which items are judged at all (bpref, judged@K, RBP)
    # Has a closed form for its expectation over the orders of tied scores (--ties expected).
    tie_expectation: bool = True
    count: bool = False  # a count over the run (item_coverage): printed as an integer
    # When the metric has no value (SPEC section 9). For a per-user metric, what leaves a user
    # without one (ild: "fewer than 2 items with features in the top K"): that user's value is
    # NaN, counted, and the mean is over the others (undefined when there is none). For a
    # corpus metric, when the run's one value is undefined ("fewer than 2 users have a
    # list"). Empty: always defined.
    undefined_when: str = ""
    # trec_eval computes its undefined case (``undefined_when``) as 0/0 and prints -nan for
    # it, and -nan for the mean over queries: ``-f trec`` under a preset does the same
    trec_nan: bool = False
    # A value measured on each user's list: trec_eval prints a per-query line (-q) for it,
    # and ``zscores`` turns it into a z-score. num_q's is the constant 1 (it counts users)
    measured: bool = True
    # Reads every judged grade, relevant or not (the expected-exposure target)
    grades: bool = False
    # Lower values are better (a distance): compare's "worse" is an increase
    lower_better: bool = False
    # On a stochastic run, one value per user from all its sampled rankings together (not a
    # mean over them): its spread over samples is 0
    over_samples: bool = False

    def __post_init__(self) -> None:
        assert self.scope in (PER_USER, CORPUS), self.scope
        assert self.needs <= set(INPUTS), self.needs
        assert self.overall in (MEAN, SUM, GEOMETRIC), self.overall
        assert not self.levels or not self.cutoff, "a metric takes levels or cut-offs"
        assert not (self.signed and self.bounded), "a bounded metric lies in [0, 1]"

    @property
    def every_user(self) -> bool:
        """Every evaluated user has a value (no rule leaves one out)."""
        return self.scope == CORPUS or not self.undefined_when

    @property
    def total(self) -> bool:
        """The value is a count (summed over users, or counted over the run): printed as an
        integer."""
        return self.overall == SUM or self.count
