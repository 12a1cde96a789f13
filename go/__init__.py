"""miai.go."""
