"""Parsing and formatting calendar dates."""

import datetime


def parse_iso(text):
    """Return the date that an ISO 8601 string such as 2024-05-01 names."""
    return datetime.date.fromisoformat(text)
