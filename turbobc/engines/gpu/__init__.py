"""The GPU engine: its plan (engine.py) and the two kernel families, one source per sweep
(single.py) and many (batched.py)."""
