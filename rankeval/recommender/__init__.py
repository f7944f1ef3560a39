"""A model's scores evaluated without files (``scores``: ``evaluate_scores``). The rest of
recommender evaluation lives by floor: the extra inputs in ``io/extras.py``, ``features.py``,
``groups.py``, ``propensities.py``; item statistics and seen-item exclusion in
``build/items.py`` and ``build/seen.py``. ``scores`` joins ``api/`` with the api step (#47)."""
