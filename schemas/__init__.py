"""Declarative resources of diagkg (data only; shipped as diagkg.data.schemas): the JSON Schemas of the assistant protocol."""
