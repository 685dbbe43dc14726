"""The environment layer: scenarios and the saboteur, sessions and the service agent, the assistants' view."""
