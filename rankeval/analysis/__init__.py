"""Analyses over per-user values: significance tests and corrections (``significance``),
what a comparison can decide (``power``, ``allpairs``, ``equivalence``), the distribution over
users and segments, popularity exposure, and the quality gates."""
