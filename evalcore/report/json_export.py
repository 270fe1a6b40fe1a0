"""A report as JSON: the report model, each run's evaluation in the contract's shape.

Internal data (annotator names and notes, database row ids) is left out
unless ``include_internal=True``.
"""

from evalcore.report.model import Report


def render_json(report: Report, *, include_internal: bool = False, indent: int | None = 2) -> str:
    """The exported report as JSON text (UTF-8 characters kept as they are)."""
    return report.for_export(include_internal).model_dump_json(indent=indent)
