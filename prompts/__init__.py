"""Every prompt as a file, loaded by name."""
