"""What recommender evaluation adds to predictions and truth: training interactions, the
catalog and item features (``extras``, ``features``), and a model's scores evaluated without
files (``scores``)."""
