"""The ``evalcore`` command line: the library seen from the shell.

Exit status: 0 success, 1 refused or the environment failed, 2 invalid input; whatever a
command does not handle becomes a message and a status (:mod:`evalcore.cli.failures`),
never a traceback unless ``EVALCORE_DEBUG=1``. Command modules are imported only when
needed: ``evalcore evaluate`` imports ``evalcore.cli.evaluate`` (named like the command);
a command named otherwise is found by importing every module.
"""

# isort: off
import evalcore.cli.process_setup  # noqa: F401  # first: before anything imports numpy
# isort: on

import importlib
import io
import os
import sys

import click

from evalcore.access.channel import audit_channel
from evalcore.cli.process_setup import collector_paused
from evalcore.contract.version import __version__
from evalcore.io.progress import TerminalProgress, reporting

#: Modules that register commands on :func:`main` when imported (``@main.command``).
#: Keep one entry per module, in alphabetical order.
COMMAND_MODULES: tuple[str, ...] = (
    "access_cmds",
    "archive_cmds",
    "backup",
    "collection_cmds",
    "compare_cmds",
    "demo",
    "evaluate",
    "judge",
    "migrate_store",
    "queries",
    "report_cmds",
    "retrieve",
    "sample",
    "store_cmds",
)


class SharedGroup(click.Group):
    """A command group other command modules add commands to (``import``): a command it
    does not hold yet is looked for after importing every command module."""

    #: The top group's commands are found by importing the module named like them first.
    named_modules = False

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands:
            load_commands(cmd_name if self.named_modules else None)
        return super().get_command(ctx, cmd_name)

    def list_commands(self, ctx: click.Context) -> list[str]:
        load_commands()
        return super().list_commands(ctx)


class _LazyGroup(SharedGroup):
    """The top group: it imports command modules on first use."""

    named_modules = True

    def invoke(self, ctx: click.Context) -> object:
        command = _command_name(ctx)  # before invoking: click consumes the arguments
        try:
            # The collector paused while the command builds its many small, acyclic objects
            # (process_setup). Audit rows written by a command record the CLI channel and the
            # OS user; long work shows a progress bar on stderr when it is a terminal.
            with collector_paused(), audit_channel("cli"), reporting(TerminalProgress()):
                return super().invoke(ctx)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise
        except BrokenPipeError:
            # The reader of our output left (`| head`): what was done is done (an import
            # committed before it printed), so exit quietly as Unix tools do.
            ctx.exit(_reader_gone())
        except Exception as exc:
            # Imported on failure only: the messages need the store's and pydantic's errors,
            # which a command that succeeds may never import (start-up of ``evaluate``).
            from evalcore.cli.failures import debugging, report_failure

            if debugging():
                raise
            ctx.exit(report_failure(command, exc))


#: The exit status of a process whose output pipe closed: 128 + SIGPIPE, what a shell
#: reports for a Unix tool the signal ended.
BROKEN_PIPE_STATUS = 141


def _reader_gone() -> int:
    """Point stdout at /dev/null, so the interpreter's last flush has nowhere to fail, and
    return :data:`BROKEN_PIPE_STATUS`."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, io.UnsupportedOperation):
        pass  # not a real file descriptor (a test's captured stream): nothing to flush
    return BROKEN_PIPE_STATUS


def _command_name(ctx: click.Context) -> str:
    """The command path the user typed (``import run``), for messages."""
    names: list[str] = []
    group: click.Command = ctx.command
    # The subcommand's name is parsed into ``_protected_args`` (its public alias is deprecated).
    for word in [*getattr(ctx, "_protected_args", []), *ctx.args]:
        sub = group.get_command(ctx, word) if isinstance(group, click.Group) else None
        if sub is None:
            break
        names.append(word)
        group = sub
    return " ".join(names) or "command"


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
