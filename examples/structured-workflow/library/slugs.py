"""Turning titles into URL slugs."""

import re


def slugify(title):
    """Return the title in lower case with runs of non-alphanumerics replaced by one dash."""
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
