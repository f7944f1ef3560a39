"""The choices and bounds of the statistics' options, in a module of constants: the command
line offers them (``--test``, ``--correction``, ``--correct-across``, ``--alternative``,
``--method``) without importing numpy or scipy, so ``rankeval --help`` stays fast."""

from rankeval.errors import OptionError

TESTS = ("t", "randomization", "bootstrap", "wilcoxon")
# Family-wise error (Holm's step-down, Bonferroni), false discovery rate (Benjamini-Hochberg's
# step-up; Benjamini-Yekutieli's, valid under any dependence), or none.
CORRECTIONS = ("holm", "bonferroni", "bh", "by", "none")
# The family a correction spans (--correct-across): "pairs", the tests of one metric@K (the
# runs against the baselines, every pair of runs, the swaps of agree), a family per metric
# and K; "metrics", every test of every metric and K a report makes, one family.
FAMILIES = ("pairs", "metrics")
# How a report names each family, after the correction's name ("holm within each metric@K")
FAMILY_WORDS = {"pairs": "within each metric@K", "metrics": "across every metric and K"}


# The fewest resamples (--rounds) of the paired tests and their intervals (compare, agree):
# a randomization or bootstrap p-value is a multiple of about 1/rounds, so under 100 it
# cannot fall below 0.01, nor pass a corrected level; and the 2.5% tails of a 95% interval
# would rest on a couple of resamples.
MIN_ROUNDS = 100


def check_tests(test: str, correction: str, across: str, rounds: int) -> None:
    """The paired tests' options (``test``, ``correction``, ``correct_across``), each one of
    its choices, and their resamples (``rounds``), at least ``MIN_ROUNDS``."""
    for name, value, choices in (("test", test, TESTS), ("correction", correction, CORRECTIONS),
                                 ("correct_across", across, FAMILIES)):
        if value not in choices:
            raise OptionError(f"{{option}} must be one of {', '.join(choices)}", name)
    if rounds < MIN_ROUNDS:
        raise OptionError(f"{{option}} must be at least {MIN_ROUNDS} (got {rounds}): the "
                          f"resampling's p-values are multiples of about 1/{{option}}",
                          "rounds")


ALTERNATIVES = ("two-sided", "larger", "smaller")
METHODS = ("t", "bootstrap")

# Bounds, past any real use: the resampling's rounds; the sampled setting's catalogue (ranks
# stay exact as floats) and negatives (its tables hold 2 x 20,000 x (negatives + 1) floats,
# a few copies); the systems of Sakai's design.
MAX_ROUNDS = 1_000_000  # resamples and permutations (100,000 is already fine-grained)
MAX_CANDIDATES = 10**12
MAX_NEGATIVES = 1_000
MAX_SYSTEMS = 1_000

# rankeval interleave (SPEC section 13): how lists are interleaved (team-draft, multileaving
# past two runs), which clicks count, the unit the bootstrap resamples, the click models and
# the simulated users of analysis.clicks.USERS
# Each method, a row: its name in the reports for two rankers and for more (None: it takes
# two only). Every report names the method from here, never by joining words to --method.
INTERLEAVE_METHOD_NAMES: dict[str, tuple[str, str | None]] = {
    "team-draft": ("team-draft interleaving", "team-draft multileaving"),
    "balanced": ("balanced interleaving", None),
    "probabilistic": ("probabilistic interleaving", "probabilistic multileaving"),
}
INTERLEAVE_METHODS = tuple(INTERLEAVE_METHOD_NAMES)
CLICK_RULES = ("all", "last")
INTERLEAVE_GROUPS = ("query", "user")
CLICK_MODELS = ("cascade", "pbm", "dcm")
CLICK_USERS = ("perfect", "navigational", "informational")
MAX_SLOTS = 1_000  # slots of an interleaved list: past any page a user reads


def interleaving_name(method: str, rankers: int) -> str:
    """How a report names ``method`` (a row of INTERLEAVE_METHOD_NAMES) over ``rankers``."""
    two, more = INTERLEAVE_METHOD_NAMES[method]
    return more if rankers > 2 and more is not None else two
