"""Moved to ``rankeval.results.store`` (#47); kept so that evaluations pickled before the
move, whose store names this module, still load."""

from rankeval.results.store import LocalValues, Store

__all__ = ["LocalValues", "Store"]
