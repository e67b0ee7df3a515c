"""``python -m opgrad``: a short demo (filled in from tools/demo_draft.py)."""

print("opgrad demo")
