"""The library's verbs, one module each (``evaluate``, ``validate``, ``compare``, ``power``,
``rbo``, ``sampled``, ``ope``, ``convert``, ``scores``; ``score`` what the command adds): each
takes what a user gives (tables or paths, options), reads it or builds the job and runs it, and
hands arrays to ``analysis``. Nothing is imported here, so that a command loads only its own
verb."""
