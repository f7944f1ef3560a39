"""What the verbs give back, as plain data: ``evaluation`` (``Evaluation``, its input
summaries and samples), ``store`` (where its per-user values live), ``validation``
(``Validation``) and ``comparison`` (``CompareResult``). Results never import an engine, an API
verb or an integration; they are shown through one door, ``report.views``."""
