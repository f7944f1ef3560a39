"""Analyses over per-user values: what a comparison can decide (power and sample size)."""
