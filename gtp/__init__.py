"""miai.gtp."""
