"""The folder tritondbg puts first on a program's PYTHONPATH (its sitecustomize.py attaches tritondbg)."""
