"""The floor simulation (SPEC 16): `python -m benchmarks.floor`, a whole shift of handhelds
against the production shape on this machine. benchmarks/floor/run.py says how it runs."""
