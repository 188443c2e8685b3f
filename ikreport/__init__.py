"""ikreport: evidence records for GPU performance claims.

Every measurement becomes an *evidence record*: a small JSON document that says what was
measured, on which GPU / engine / model / workload, with which tool, and what the result
does NOT show (``limitations``). Records are content-addressed (a record's name is the
sha256 of its bytes), and the site built from them cites records by hash.
"""

__version__ = "0.1.0"
