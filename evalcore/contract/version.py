"""The evalcore version: printed by ``evalcore --version`` and written into every report.

The one place it is written; ``pyproject.toml`` reads it from here.
"""

__version__ = "0.1.0"
