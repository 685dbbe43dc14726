"""The assistants: the registry (entry points), baselines, human, neuro-symbolic, model-based, llm."""
