"""miai.engine."""
