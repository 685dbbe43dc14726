"""The knowledge-graph layer: the store (embedded or remote), query files, RDF I/O, validation, reasoning, loading, vocabulary."""
