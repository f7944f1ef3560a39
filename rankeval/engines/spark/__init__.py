"""The Spark engine (``--engine spark``; the library's door is ``rankeval.spark``): the class
the registry holds (``engine``), the session (``session``), the driver's job (``driver``),
what runs on the executors (``worker``, ``exchange``, ``buckets``), the inputs as DataFrames
(``frames``), item statistics on the cluster (``items``) and the per-user store
(``result``). This package imports nothing, so that the registry's import of ``engine`` stays
light."""
