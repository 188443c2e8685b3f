"""Pure parsers and analyses: text and dicts in, data out (no files, no subprocesses)."""
