"""The certificates rendered in other people's formats, each checked by that format's own tools and by verify.py."""
