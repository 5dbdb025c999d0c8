"""Renderers of a RunRecord: one module per output format."""
