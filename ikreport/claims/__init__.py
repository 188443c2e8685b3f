"""Claims: sentences about measured values, computed from records by rules (pure)."""
