"""Runs side by side: the comparison's data, its figure, its interactive figure and its HTML page
(docs/compare.md)."""
