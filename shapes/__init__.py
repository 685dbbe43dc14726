"""Declarative resources of diagkg (data only; shipped as diagkg.data.shapes)."""
