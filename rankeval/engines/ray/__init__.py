"""The Ray engine (``--engine ray``; the library's door is ``rankeval.ray``): the class the
registry holds (``engine``), Ray for the run (``cluster``), the driver's job (``driver``),
what runs in Ray's tasks (``exchange``), reading the inputs with Ray Data (``read``), item
statistics over the cluster (``items``) and the per-user store in the object store
(``result``). This package imports nothing, so that the registry's import of ``engine``
stays light."""
