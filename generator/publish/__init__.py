"""Publishing a built release where readers fetch it: an S3-compatible object store or a folder.

A release is published in an order no reader following the log can see torn: the objects that
never change are created first (only if absent: an object already there with other bytes is an
error, never overwritten), then the pages and indexes, and the checkpoint last. Only what changed
since the last publish to the same target is sent; an immutable object is never deleted, a page
no release lists any more is.
"""
