"""Nsight Compute's CSV exports, read: the file (export), its pages (raw, details, session),
the launch table they give (table, fold), the metric names of every ncu release (metrics) and
what is derived from them (clocks, roofline, stalls, summary). ``read.read_exports`` is the
entry; each module says the input it accepts."""
