"""Readers and writers at the file edge: every byte read here is validated here.

Readers either return fully validated data or raise
:class:`~evalcore.io.errors.InputErrors` naming every error of the input (file, line,
field, what to do); they never return part of a bad file.
"""
