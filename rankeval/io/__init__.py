"""Inputs and outputs: the format registry (``formats``), readers, TREC and JSON layouts;
raw tables to typed inputs (``load``, with each role's ``columns``); ``validate`` and
``convert``; numpy <-> Arrow (``arrow``); outputs that appear whole or not at all
(``output``)."""
