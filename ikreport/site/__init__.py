"""The static site: gather a complete model, render it, write it once."""
