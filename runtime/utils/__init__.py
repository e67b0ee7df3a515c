"""``opgrad.utils``."""
