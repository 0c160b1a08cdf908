"""Judging text: the rule engine and its pure helpers. Knows nothing of git or terminals."""
