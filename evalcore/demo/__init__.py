"""The embedded demo study: a generated corpus, queries, runs and labels (nothing downloaded)."""
