"""The LLM layer: one client for any OpenAI-compatible endpoint, every call recorded in the
graph and replayable, prompts rendered from template files."""
