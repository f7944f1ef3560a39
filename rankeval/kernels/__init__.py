"""The numeric core: the kernel contract (``Chunk``), per-user sums and the metric kernels,
exact aggregation, distinct values and the thread pool they use. numpy only: no pandas, no
Arrow, no I/O, so every engine runs the same code on its partitions."""
