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


def takes_args(handler: Callable[[Args], None]) -> Callable[..., None]:
    """A click callback calling ``handler`` with its keyword values as one :class:`Args`."""

    @functools.wraps(handler)
    def callback(**params: Any) -> None:
        handler(Args(**params))

    return callback


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
    """``--max-document-mib`` and ``--max-unpacked-gib``, given to ``fn`` as ``limits``."""

    @functools.wraps(fn)
    def wrapper(
        *args: Any, max_document_mib: float | None, max_unpacked_gib: float | None, **kwargs: Any
    ) -> Any:
        limits = ReadLimits.from_options(max_document_mib, max_unpacked_gib)
        return fn(*args, limits=limits, **kwargs)

    wrapper = option(
        f"{UNPACKED_OPTION} max_unpacked_gib",
        f"Refuse a compressed file or zip unpacking to more (default "
        f"{size_text(MAX_UNPACKED_BYTES, exact=False)}).",
        type=_POSITIVE,
        metavar="GiB",
    )(wrapper)
    return option(
        f"{DOCUMENT_OPTION} max_document_mib",
        f"Refuse a document (a record, a line) larger than this (default "
        f"{size_text(MAX_DOCUMENT_BYTES, exact=False)}).",
        type=_POSITIVE,
        metavar="MiB",
    )(wrapper)


def layout_options(fn: Callable) -> Callable:
    """``--no-header`` and ``--columns``, given to ``fn`` as ``layout``."""
    from evalcore.io.records import Layout

    @functools.wraps(fn)
    def wrapper(*args: Any, no_header: bool, columns: str | None, **kwargs: Any) -> Any:
        try:
            layout = Layout.from_options(no_header, columns)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--columns") from None
        return fn(*args, layout=layout, **kwargs)

    wrapper = option(
        "--columns",
        "TSV/CSV without a header: the columns' names in order, e.g. id,title,text "
        "(- skips a column).",
        metavar="A,B,...",
    )(wrapper)
    return option(
        "--no-header",
        "TSV/CSV: the first line is data, read as id, text (a file whose first line "
        "names no column is read so anyway, and the output says so).",
        flag=True,
    )(wrapper)
