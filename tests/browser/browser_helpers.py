"""Helpers for the browser tests (not a test module)."""


def settle(page, timeout_ms: int = 30_000) -> None:
    """Wait until Streamlit has finished the rerun the last action started."""
    page.wait_for_timeout(150)
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')",
        timeout=timeout_ms,
    )


def wait_for_app(page, text: str, timeout_ms: int = 30_000) -> None:
    """Wait until the Streamlit app has rendered ``text`` and stopped running."""
    page.get_by_text(text, exact=False).first.wait_for(timeout=timeout_ms)
    settle(page, timeout_ms)
