"""Evaluation campaigns: sessions over the catalogue recorded in the store, the adaptive protocol, metrics by SPARQL, reports."""
