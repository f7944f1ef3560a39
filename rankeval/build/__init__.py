"""From typed inputs to a ``Chunk``: ids encoded, each list ordered, the inputs checked, the
run joined with the truth. ``stages`` lists the stages in order; each is its own module."""
