"""Running sessions: the runner (and replay), the trajectory writer, the hypothesis ledger, transcripts."""
