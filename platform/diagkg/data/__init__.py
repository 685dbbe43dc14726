"""Declarative resources (ontology, shapes, queries, mappings, scenarios), mapped here by pyproject.toml."""
