"""scripts/evaluate's parts: campaigns, statistics, report (docs/evaluate.md)."""
