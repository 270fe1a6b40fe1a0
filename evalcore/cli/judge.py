"""``evalcore judge``: an LLM judge over the unknown pooled units, stored as automatic judgments.

A thin face of :mod:`evalcore.annotation.judge`: plan (lead-only), confirm, run, summarise.
The key is read from the environment variable ``--key-env``, never from the command line,
and is never printed or stored. Exit status 0 when every call was answered, 1 when some
failed or the run stopped early (what was answered is stored either way).
"""

from __future__ import annotations

import os
import sys

import click

from evalcore.annotation.judge import (
    JudgePlan,
    JudgeSummary,
    default_source,
    plan_judging,
    run_judging,
)
from evalcore.annotation.judge_prompt import DOCUMENT_CHARS, GRADES
from evalcore.cli import main
from evalcore.cli.input_options import Args, command, option, quiet_option
from evalcore.cli.store_cmds import actor_option, store, study_options
from evalcore.io.chat_completions import ChatClient, TokenBucket
from evalcore.io.progress import reporter

#: The environment variable holding the endpoint's key, unless --key-env names another.
KEY_VARIABLE = "RELEVANCE_LEDGER_JUDGE_KEY"


def _print_plan(plan: JudgePlan, a: Args, has_key: bool) -> None:
    click.echo(
        f"{plan.n_unknown} unknown pooled unit(s) in study {plan.study_id}; "
        f"{plan.n_judged} already judged by {plan.source}"
    )
    for reason, n in sorted(plan.withheld.items()):
        click.echo(f"  {n} not sent: {reason}")
    if plan.n_beyond_limit:
        click.echo(f"  {plan.n_beyond_limit} left for a later run (--limit)")
    key = f"key from {a.key_env}" if has_key else f"no key ({a.key_env} is not set)"
    click.echo(
        f"{len(plan.units)} call(s) to {a.endpoint.rstrip('/')}/chat/completions, model "
        f"{a.model}, documents cut at {DOCUMENT_CHARS} characters; {key}"
    )


def _print_summary(summary: JudgeSummary, source: str) -> None:
    click.echo(f"calls made: {summary.calls} ({summary.requests} HTTP request(s) with retries)")
    click.echo(
        f"answers stored: {summary.stored} as automatic judgments of {source} (not evidence)"
    )
    click.echo(f"failures: {sum(summary.failures.values())}")
    for reason, n in sorted(summary.failures.items()):
        click.echo(f"  {n} {reason}")
    click.echo(f"time: {summary.seconds:.1f} s")
    if summary.stopped:
        click.echo(
            f"stopped early: {summary.stopped}; run the same command again to "
            "continue where it stopped"
        )


def _interactive() -> bool:
    """Whether someone can answer the confirmation (stdin is a terminal)."""
    return sys.stdin.isatty()


@command(main, "judge")
@study_options
@option(
    "--endpoint",
    "An OpenAI-compatible API base, e.g. http://localhost:8000/v1 "
    "(the command posts to URL/chat/completions).",
    required=True,
    metavar="URL",
)
@option("--model", "The model name the endpoint serves.", required=True)
@option(
    "--source",
    "Automatic source the answers are stored under (default judge:<model>).",
    metavar="NAME",
)
@option(
    "--limit", "Send at most N units (the rest wait for a later run).", type=click.IntRange(min=0)
)
@option(
    "--grades",
    "0-3: UMBRELA's rubric, stored as gains 0-3; 0-4: with a top grade 4.",
    shown="0-3",
    choices=GRADES,
)
@option(
    "--rate",
    "HTTP requests per second at most.",
    shown=2.0,
    type=click.FloatRange(min=0, min_open=True),
)
@option(
    "--timeout", "Seconds per request.", shown=60.0, type=click.FloatRange(min=0, min_open=True)
)
@option(
    "--attempts",
    "Requests per call at most (retries on 429, 5xx, timeouts).",
    shown=5,
    type=click.IntRange(min=1, max=20),
)
@option(
    "--workers",
    "Calls waiting for their answers at once (the rate still holds).",
    shown=4,
    type=click.IntRange(min=1, max=32),
)
@option(
    "--key-env",
    "Environment variable holding the endpoint's key (sent as a Bearer token).",
    shown=KEY_VARIABLE,
    metavar="VAR",
)
@option("--yes -y", "Start without asking for confirmation.", flag=True)
@quiet_option
@actor_option
def judge_command(a: Args) -> None:
    """Judge the study's unknown pooled units with an LLM (an OpenAI-compatible chat
    endpoint) and store the grades as automatic judgments: never evidence."""
    if not a.endpoint.startswith(("http://", "https://")):
        raise click.BadParameter("give an http:// or https:// URL", param_hint="--endpoint")
    name = a.source if a.source is not None else default_source(a.model)
    key = os.environ.get(a.key_env) or None
    with store(a) as db:
        plan = plan_judging(db, source=name, **a.pick("study_id", "actor", "limit"))
        _print_plan(plan, a, key is not None)
        if not plan.units:
            click.echo("nothing to judge")
            return
        if not a.yes:
            if not _interactive():
                click.echo(
                    f"evalcore judge: not a terminal; pass --yes to make the "
                    f"{len(plan.units)} call(s)",
                    err=True,
                )
                sys.exit(2)
            if not click.confirm(f"Make {len(plan.units)} call(s)?", default=False):
                click.echo("nothing sent")
                return
        settings = a.pick("endpoint", "model", "timeout", "attempts")
        client = ChatClient(key=key, bucket=TokenBucket(a.rate), **settings)
        summary = run_judging(db, plan, client, **a.pick("actor", "grades", "workers"))
        reporter().done()
        _print_summary(summary, name)
    if summary.stopped or summary.failures:
        sys.exit(1)
