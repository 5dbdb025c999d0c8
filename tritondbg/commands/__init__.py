"""One function per CLI command; each takes keyword arguments and returns an exit status."""
