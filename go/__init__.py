"""miai.go."""

from miai.go import native as _native

_native.choose(__path__)  # compiled modules or their Python source, before any of them is imported
