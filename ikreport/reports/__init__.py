"""Authored reports: Markdown that cites records by hash and takes its numbers from them."""
