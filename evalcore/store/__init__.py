"""The SQLite evidence store: labels are the asset, and none is ever lost."""
