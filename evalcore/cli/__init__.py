"""The ``evalcore`` command line: the library seen from the shell.

Each command group lives in its own module and is registered here. Exit
status: 0 success, 1 refused (e.g. a pinned corpus changed), 2 invalid input.

Command modules are imported only when the command line needs them: running
``evalcore evaluate`` imports ``evalcore.cli.evaluate`` (the module named like
the command) and not the store's or the app's dependencies. A command whose
module is named differently is found by importing every module.
"""

import importlib

import click

from evalcore import __version__

#: Modules that register commands on :func:`main` when imported (``@main.command``).
#: Keep one entry per module, in alphabetical order.
COMMAND_MODULES: tuple[str, ...] = (
    "access_cmds",
    "compare_cmds",
    "demo",
    "evaluate",
    "report_cmds",
    "retrieve",
    "store_cmds",
)


class _LazyGroup(click.Group):
    """A group that imports command modules on first use."""

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands:
            load_commands(cmd_name)
        return super().get_command(ctx, cmd_name)

    def list_commands(self, ctx: click.Context) -> list[str]:
        load_commands()
        return super().list_commands(ctx)


def load_commands(name: str | None = None) -> None:
    """Import the module of command ``name`` (named like it), or every command module."""
    module = name.replace("-", "_") if name else None
    if module in COMMAND_MODULES:
        importlib.import_module(f"evalcore.cli.{module}")
        if name in main.commands:
            return
    for module in COMMAND_MODULES:
        importlib.import_module(f"evalcore.cli.{module}")


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="evalcore")
def main() -> None:
    """Relevance Ledger: retrieval evaluation with explicit reference evidence."""
