"""Dayflow: a daily-brief agent whose runs outlive their process."""

__version__ = "0.1.0"
