"""Plain-text renderings of report models (no HTML, no markdown)."""
