"""rankeval's version, on the lowest floor: what reports write and the reader of earlier
reports compares (``rankeval.__version__`` is this one)."""

__version__ = "0.1.0"
