"""Counting words, lines and characters in text."""

from collections import Counter


def counts(words):
    """Return a Counter of how often each word occurs."""
    return Counter(words)


def top(counter, n):
    """Return the n most common (word, count) pairs, most common first; ties keep first-seen order."""
    return counter.most_common(n)
