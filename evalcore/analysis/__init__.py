"""Looking at results: the inspector, run comparison, statistics and annotator agreement."""
