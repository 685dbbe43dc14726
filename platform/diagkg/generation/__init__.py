"""Scenarios generated from the fault catalogue, diagnosability, benchmark splits."""
