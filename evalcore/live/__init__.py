"""Incremental evaluation state shared by the dashboard and the annotate page."""
