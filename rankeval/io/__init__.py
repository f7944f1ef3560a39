"""Files in and out: the format registry (``formats``), readers, TREC and JSON layouts, and
outputs that appear whole or not at all (``output``)."""
