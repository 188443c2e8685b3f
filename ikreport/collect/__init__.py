"""Collectors and importers: the impure edge that reads tool output and writes records."""
