"""Readers and writers at the file edge: every byte read here is validated here.

* :mod:`evalcore.io.errors`: :class:`~evalcore.io.errors.InputError` (file, line,
  field, message, hint) and the :class:`~evalcore.io.errors.InputErrors` exception
  that carries every error found in an input, not only the first.
* :mod:`evalcore.io.text_lines`: decoding and line splitting shared by all
  line-oriented formats (BOM, CRLF/CR, invalid UTF-8, blank and ``#`` lines).
* :mod:`evalcore.io.observations_jsonl`: the contract's observation JSONL.
* :mod:`evalcore.io.trec`: TREC qrels and run files, and their join into a packed batch.

Readers either return fully validated data or raise :class:`InputErrors`; they
never return part of a bad file.
"""
