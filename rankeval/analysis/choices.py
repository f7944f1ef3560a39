"""The choices of the statistics' options, in a module of constants: the command line offers
them (``--test``, ``--correction``, ``--alternative``, ``--method``) without importing numpy
or scipy, so ``rankeval --help`` stays fast."""

TESTS = ("t", "randomization", "bootstrap", "wilcoxon")
# Family-wise error (Holm's step-down, Bonferroni), false discovery rate (Benjamini-Hochberg's
# step-up; Benjamini-Yekutieli's, valid under any dependence), or none.
CORRECTIONS = ("holm", "bonferroni", "bh", "by", "none")
ALTERNATIVES = ("two-sided", "larger", "smaller")
METHODS = ("t", "bootstrap")
