"""What every command shares: the one model its handler receives (:class:`Args`), and the
options of the commands that read input files or run long: ``--quiet``, the read limits
(:class:`~evalcore.contract.limits.ReadLimits`) and a headerless file's layout.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from types import SimpleNamespace
from typing import Any

import click

from evalcore.contract.limits import (
    DOCUMENT_OPTION,
    MAX_DOCUMENT_BYTES,
    MAX_UNPACKED_BYTES,
    UNPACKED_OPTION,
    ReadLimits,
    size_text,
)
from evalcore.io.progress import TerminalProgress, reporter


class Args(SimpleNamespace):
    """A command's parsed options and arguments, as attributes named like click's parameters."""

    def pick(self, *names: str) -> dict[str, Any]:
        """The named values, to pass on as keywords of the same names."""
        return {name: getattr(self, name) for name in names}


def command_name() -> str:
    """The command path the user typed, without the program's name (``import qrels``)."""
    ctx: click.Context | None = click.get_current_context()
    names: list[str] = []
    while ctx is not None and ctx.parent is not None:
        names.insert(0, ctx.info_name or "")
        ctx = ctx.parent
    return " ".join(names)


def option(
    names: str,
    help: str | None = None,
    *,
    shown: Any = None,
    choices: Sequence[str] | None = None,
    flag: bool = False,
    **settings: Any,
) -> Callable:
    """``click.option`` declared in one line: ``names`` are its flags and parameter name,
    space-separated; ``shown`` a default that --help shows; ``choices`` the values allowed;
    ``flag`` an on/off switch; ``settings`` click's other settings."""
    if shown is not None:
        settings |= {"default": shown, "show_default": True}
    if choices is not None:
        settings["type"] = click.Choice(choices)
    if flag:
        settings["is_flag"] = True
    return click.option(*names.split(), help=help, **settings)


def _silence(ctx: click.Context, param: click.Parameter, quiet: bool) -> None:
    if quiet and isinstance(progress := reporter(), TerminalProgress):
        progress.quiet = True


#: ``--quiet``: no progress bar (every command that can run long takes it).
quiet_option = option(
    "--quiet -q",
    "Show no progress bar on stderr.",
    flag=True,
    expose_value=False,
    callback=_silence,
)

_POSITIVE = click.FloatRange(min=0, min_open=True)


def limit_options(fn: Callable) -> Callable:
    """``--max-document-mib`` and ``--max-unpacked-gib`` (the handler's ``limits``)."""
    fn = option(
        f"{UNPACKED_OPTION} max_unpacked_gib",
        f"Refuse a compressed file or zip unpacking to more (default "
        f"{size_text(MAX_UNPACKED_BYTES, exact=False)}).",
        type=_POSITIVE,
        metavar="GiB",
    )(fn)
    return option(
        f"{DOCUMENT_OPTION} max_document_mib",
        f"Refuse a document (a record, a line) larger than this (default "
        f"{size_text(MAX_DOCUMENT_BYTES, exact=False)}).",
        type=_POSITIVE,
        metavar="MiB",
    )(fn)


def layout_options(fn: Callable) -> Callable:
    """``--no-header`` and ``--columns`` (the handler's ``layout``)."""
    fn = option(
        "--columns",
        "TSV/CSV without a header: the columns' names in order, e.g. id,title,text "
        "(- skips a column).",
        metavar="A,B,...",
    )(fn)
    return option(
        "--no-header",
        "TSV/CSV: the first line is data, read as id, text (a file whose first line "
        "names no column is read so anyway, and the output says so).",
        flag=True,
    )(fn)


def _args(params: dict[str, Any]) -> Args:
    """The parsed values as :class:`Args`, the layout and read limits options made one value."""
    if "no_header" in params:
        from evalcore.io.records import Layout

        try:
            params["layout"] = Layout.from_options(params.pop("no_header"), params.pop("columns"))
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--columns") from None
    if "max_document_mib" in params:
        document, unpacked = params.pop("max_document_mib"), params.pop("max_unpacked_gib")
        params["limits"] = ReadLimits.from_options(document, unpacked)
    return Args(**params)


def command(group: click.Group, name: str, **settings: Any) -> Callable:
    """Register ``handler(args)`` as command ``name`` of ``group`` (``settings``: click's): it
    is called with the parsed options and arguments as one :class:`Args`."""

    def register(handler: Callable[[Args], None]) -> click.Command:
        @functools.wraps(handler)  # with the options the handler's decorators declared
        def callback(**params: Any) -> None:
            handler(_args(params))

        return group.command(name, **settings)(callback)

    return register
