"""The library's verbs, one module each (``evaluate``, ...): each takes what a user gives
(tables or paths, options), builds the job and runs it. Nothing is imported here, so that a
command loads only its own verb."""
