"""Imported first by the forkserver (``workers.start_server`` preloads it) and by nothing else.

Ctrl-C reaches every process of the command's group, and it is the command's to answer in one
line. multiprocessing has its server ignore it only once the preloaded modules are imported, so
one pressed meanwhile printed that import's traceback; from here on it ignores it, and so does
each worker forked from it."""

import signal

signal.signal(signal.SIGINT, signal.SIG_IGN)
