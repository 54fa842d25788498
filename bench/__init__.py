"""turbobc benchmarks: each writes JSON records to bench/results/ (see bench/records.py)."""
