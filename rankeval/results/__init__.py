"""What an evaluation gives back, as plain data: ``evaluation`` (``Evaluation``, its input
summaries and samples) and ``store`` (where its per-user values live). Results never import an
engine, an API verb or an integration; they are shown through one door, ``report.views``."""
