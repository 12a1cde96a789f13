"""miai.nets."""
