"""Splitting text into lower-case word tokens."""

import re


def words(text):
    """Return the words of the text in lower case: runs of letters, digits and apostrophes."""
    return re.findall(r"[a-z0-9']+", text.lower())
