"""``evaluate(predictions, truth, ...)`` -> an immutable ``Evaluation``: the library's entry
point.

The library never prints, exits or reads ``sys.argv``: warnings come back as ``Notice`` data and
problems as ``RankevalError`` exceptions. The command line is a thin shell over it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Unpack

from rankeval.api.gold import evaluate_gold
from rankeval.api.preferences import preference_evaluation
from rankeval.api.request import Options, evaluation
from rankeval.errors import OptionError
from rankeval.results.evaluation import Evaluation
from rankeval.results.preferences import PreferenceEvaluation


def evaluate(
    predictions: Any,
    truth: Any,
    metrics: str | Iterable[str] | None = None,
    k: int | str | Iterable[int | str] | None = None,
    *,
    engine: str = "local",
    engine_options: Mapping[str, Any] | None = None,
    gold: Any = None,
    gold_format: str | None = None,
    ppi_lambda: float | None = None,
    gold_strata: str | None = None,
    gold_plan: float | None = None,
    confidence: float = 0.95,
    **options: Unpack[Options],
) -> Evaluation | PreferenceEvaluation:
    """Evaluate a ranking against ground truth.

    ``predictions`` and ``truth`` are pandas or polars DataFrames, Arrow tables or record
    batches, or file paths. Columns are found by name or alias (``user_id``/``qid``,
    ``item_id``/``docno``, ``rank``, ``score``, ``relevance``/``rating``) unless named with
    ``user_col``, ``item_col``, ``rank_col``, ``score_col``, ``relevance_col``.
    ``metrics``: names such as ``"ndcg"`` (every K) or ``"map@5"``; ``k``: one or more cut-offs.
    ``compat="trec_eval"``: trec_eval's conventions and measure names.
    ``train``: training interactions (user, item, optional ``count``), for seen-item exclusion
    and the popularity metrics; ``catalog``: the item universe (coverage, gini);
    ``item_features``: per-item vectors or tags (ild, serendipity); ``item_groups``: the
    group(s) of each item, per group column (awrf); ``propensity``: each item's (or each
    user-item pair's) probability of being observed (ips_recall, ... without gamma=);
    ``exclude``: (user, item) pairs masked from the lists before the cut (a validation
    split), apart from ``train`` (whose pairs ``exclude_seen`` masks). Any form the two main
    inputs take (``train_format``, ..., ``exclude_format`` for paths).
    ``engine``: where to compute (``rankeval.engines.ENGINES``: ``"local"``, or ``"spark"``
    with Spark DataFrames or paths); ``engine_options``: the engine's own (``{"spark":
    session, "partitions": 64}``).
    ``gold``: human judgments (qrels) of a uniform random sample of the queries, ``truth``
    being machine-made (an LLM's) judgments of every query: the result then also holds
    ``.gold``, per metric the PPI++ estimate with its ``confidence`` interval beside the
    machine-only, gold-only and bias estimates (SPEC §12; ``evaluate_gold``, whose
    ``gold_format``, ``ppi_lambda``, ``gold_strata`` and ``gold_plan`` these are).

    The settings (keywords; None means the default):

    - gain: 'linear' | 'exponential' | 'binary' (default 'linear'). Gain of a relevance r in
      CG/DCG/NDCG: linear r, exponential 2^r - 1, or binary: 1 for any r > 0 (RecBole;
      grades then only decide what is relevant elsewhere).
    - ap_denominator: 'min' | 'relevant' (default 'min'). Divide AP@K by min(R, K), or by R,
      all relevant items (trec_eval).
    - rr_target: 'first-relevant' | 'most-relevant' (default 'first-relevant'). MRR uses the
      rank of the first relevant item, or of the most relevant one.
    - relevance_threshold: T (default None). An item is relevant when relevance >= T
      (default: relevance > 0); T = 0: every judged item, grade 0 included, and never one
      missing from the truth (trec_eval -l 0).
    - ties: 'trec' | 'item-asc' | 'input' | 'ranx' | 'expected' | 'optimistic' | 'pessimistic' |
      'provider' (default 'trec'). Tied scores: ordered by item id descending as trec_eval, item
      id ascending, file order, or as ranx's Run orders them (numba's quicksort of the negated
      scores over each list in file order; needs numba); or scored fairly: the expected value
      over all their orders, or the best or worst order (relevant items first or last); or
      provider: each metric ordered as the ir_measures provider computing it orders ties (trec
      for pytrec_eval and gdeval, item-asc for msmarco, judged, compat and pyndeval, input for
      cwl_eval; trec for a metric ir_measures does not name), the reports naming each metric's
      rule.
    - order_by: 'rank' | 'score' (default 'rank'). What orders each list when the run has
      both a rank and a score column: its ranks, or its scores (trec_eval, pytrec_eval and
      ir_measures read scores and never ranks); a run with one of them is ordered by that
      one.
    - zero_relevant_users: 'skip' | 'zero' (default 'skip'). Users with no relevant item:
      leave out, or score 0 and average in (trec_eval).
    - skip_missing_users: True | False (default False). Leave out users with relevant items
      but no predictions (default: they score 0; trec_eval leaves them out unless given -c).
    - missing_user_counts: 'counted' | 'zero' (default 'counted'). num_q and num_rel of a
      user scored without predictions: counted, as trec_eval -c counts them, or 0 like every
      other metric, as ir_measures fills a query missing from the run.
    - max_depth: N (default None). Only the first N items of each list count, for every
      metric and K (trec_eval -M).
    - judged_only: True | False (default False). Condensed lists: drop the items without a
      judgement in the truth before cutting at K, so that the rest move up (trec_eval -J;
      Sakai 2007).
    - rbp_p: P (default 0.8). Persistence p of rank-biased precision: the chance of reading
      on to the next item (trec_eval 10.0: 0.9).
    - rbp_gain: 'binary' | 'graded' | 'raw' (default 'binary'). What an item earns in RBP: 1
      when relevant, or its grade divided by the user's highest grade when that exceeds 1,
      whatever the relevance threshold (trec_eval 10.0), or the grade itself when relevant
      (raw: ranx).
    - rbp_residual_tail: 'always' | 'if-unjudged' (default 'always'). rbp_residual counts
      the weight past the list's end always (Moffat and Zobel), or only when the list holds
      an unjudged item, else it is 0 (trec_eval 10.0's rbp_resid).
    - patience: P (default 0.5). The expected-exposure reader's patience p: an item at rank
      i gets exposure p^(i-1) (Diaz et al. 2020; the paper's 0.5).
    - gains: G=V,... (default None). The gain of each grade in the DCG family, as GRADE=GAIN
      pairs (e.g. gains 1=1,2=3); a grade not named keeps its own value, and the gain
      function then applies (trec_eval's ndcg.1=1,2=3).
    - collection_size: N (default None). Items in the collection, read by utility's fourth
      coefficient (the non-relevant items not retrieved) alone (trec_eval -N).
    - recall_rounding: 'plus-0.9' | 'round' (default 'plus-0.9'). How iprec turns a recall
      level L into a number of relevant items: round(L R) (trec_eval 10.0), or floor(L R +
      0.9) (trec_eval 9.0.8, pytrec_eval, ir_measures).
    - err_max_grade: G (default 4.0). Highest relevance grade of ERR: a grade g stops the
      reader with probability (2^g - 1) / 2^max (gdeval and ir_measures use 4); higher
      grades are an error.
    - exclude_seen: True | False (default False). Drop predicted (user, item) pairs present
      in train before cutting at K; the rest move up.
    - exclude_seen_truth: True | False (default False). Also drop truth rows whose (user,
      item) pair is in train.
    - popularity: 'users' | 'interactions' (default 'users'). Item popularity from train:
      its distinct users, or its interactions (rows, or the sum of the count column).
    - tail_share: S (default 0.2). long_tail: the tail's share S, of all popularity (the
      short head, the most popular items, holds 1 - S) or of the training items (see
      tail_by).
    - tail_by: 'popularity' | 'items' (default 'popularity'). long_tail: what tail_share
      measures: the tail's share of all popularity (the short head holds the rest), or its
      share of the items seen in training, the least popular ones, ties by id (RecBole's
      TailPercentage; unseen items are not tail).
    - novelty_model: 'discovery' | 'choice' (default 'discovery'). novelty's item
      probability: the share of training users who met the item (discovery), or the item's
      share of all training popularity (choice; Castells et al. 2011, Microsoft Recommenders
      with popularity interactions).
    - novelty_unseen: 'rarest' | 'zero' (default 'rarest'). novelty of an item unseen in
      training: the rarest, log2(N + 1) with N the model's denominator, or 0 (Microsoft
      Recommenders leaves it out of the sum, not the count).
    - catalog_padding: N (default 0). Items added to the catalog's size in coverage, gini
      and norm_entropy (RecBole counts its padding item: 1).
    - entropy_unit: 'bits' | 'nats' (default 'bits'). entropy in bits (log2) or nats
      (natural log, RecBole).
    - entropy_per_item: True | False (default False). Divide entropy by the number of
      distinct recommended items (RecBole's ShannonEntropy).
    - dedupe: True | False (default False). Keep the best-ranked of repeated (user, item)
      predictions instead of failing.
    - judgment_groups: True | False (default False). The truth's second field (a qrels
      file's; a subtopic column) names a judgment group, a judge: each group's judgments
      score the user's list apart and the user's value is their mean (trec_eval -R qrels_jg
      and its P_avgjg, map_avgjg, Rprec_mult_avgjg).
    - zscores: FILE (default None). A file of each user's mean and standard deviation of
      each metric over reference runs ('qid measure mean stddev' lines, the metric as the
      report names it): every value is reported as its z-score, (value - mean) / stddev, and
      each overall value is the z-scores' mean (trec_eval -Z).
    - preferences: True | False (default False). The truth is preferences between documents
      (trec_eval -R prefs: qid group subgroup docno level lines; plain qrels read as
      preferences, -R qrels_prefs): only the prefs_* measures are computed (-m prefs,
      all_prefs, prefs_simp, ...). The result is then a ``PreferenceEvaluation``
      (``rankeval.results.preferences``): ``metrics``, ``per_user``, ``to_dict()``.

    Column options: ``user_col``, ``item_col``, ``rank_col``, ``score_col``,
    ``relevance_col``, ``count_col`` (train), ``subtopic_col``, ``sample_col``,
    ``propensity_col``; formats (default: from the extension): ``preds_format``,
    ``truth_format``, ``train_format``, ``catalog_format``, ``item_features_format``,
    ``item_groups_format``, ``propensity_format``, ``exclude_format``. Every keyword is
    declared once, in ``rankeval.api.request.Options``.

    >>> result = evaluate(preds_df, truth_df, metrics=["ndcg", "map"], k=[5, 10])
    >>> result.metrics["ndcg@10"], result.per_user.head()
    """
    if gold is not None:
        return evaluate_gold(predictions, truth, gold, metrics, k, gold_format=gold_format,
                             ppi_lambda=ppi_lambda, gold_strata=gold_strata,
                             confidence=confidence, gold_plan=gold_plan, engine=engine,
                             engine_options=engine_options, **options)
    unused = {"gold_format": gold_format, "ppi_lambda": ppi_lambda, "gold_strata": gold_strata,
              "gold_plan": gold_plan}
    given = [name for name, value in unused.items() if value is not None]
    if given or confidence != 0.95:
        raise OptionError(f"{', '.join(given) or 'confidence'} goes with gold= (the human "
                          "judgments of a sample of the queries)")
    if options.get("preferences"):  # trec_eval's prefs_* measures, scored apart
        if engine_options:
            raise OptionError("engine_options: preferences are scored by the local engine "
                              "alone")
        return preference_evaluation(predictions, truth, metrics, k, options, engine)
    return evaluation(predictions, truth, metrics, k, options, engine, engine_options)
