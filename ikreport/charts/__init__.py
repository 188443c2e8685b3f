"""Charts: what a record kind declares (kinds/base.py) or a history page shows, drawn to static SVG."""
