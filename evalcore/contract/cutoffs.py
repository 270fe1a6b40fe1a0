"""The range of a cutoff depth ``k``.

The one place the ceiling is written; the observation model and the command
line's ``--k`` options read :data:`MAX_K` from here (a module without pydantic,
so a command's options cost nothing to declare).
"""

#: The largest cutoff depth: an SQLite INTEGER (2^63 - 1); larger values are refused as input.
MAX_K: int = 2**63 - 1
