"""web-fetch: a URL's way to a Document, in two rooms and one stage order.

`network/` talks to the site (the guarded session, robots.txt, the soft-404 probe, the
browser); `reading/` turns bytes into a Document and never touches the network (decode,
extract, tidy, documents); `pipeline.py` runs the stages in order, the one place that knows it.
"""
