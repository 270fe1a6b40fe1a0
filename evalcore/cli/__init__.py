"""The ``evalcore`` command line: the library seen from the shell.

Each command group lives in its own module and is registered here. Exit
status: 0 success, 1 refused (e.g. a pinned corpus changed), 2 invalid input.
"""

import click

from evalcore import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="evalcore")
def main() -> None:
    """Relevance Ledger: retrieval evaluation with explicit reference evidence."""


# Command modules register themselves on `main` (imported for that side effect).
# Keep one line per module, in alphabetical order.
from evalcore.cli import access_cmds  # noqa: E402, F401, I001
from evalcore.cli import demo  # noqa: E402, F401, I001
from evalcore.cli import evaluate  # noqa: E402, F401, I001
from evalcore.cli import report  # noqa: E402, F401, I001
from evalcore.cli import retrieve  # noqa: E402, F401, I001
from evalcore.cli import store_cmds  # noqa: E402, F401, I001
