"""diagkg: diagnostic scenarios and assistants on a knowledge graph."""
__version__ = "0.1.0"
