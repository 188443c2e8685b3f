"""The archive: content-addressed records and blobs, reading and checking them, and what is kept between builds."""
