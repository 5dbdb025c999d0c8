"""Error types the CLI turns into one clear line and an exit status."""


class UsageError(Exception):
    """Bad input from the user (unknown kernel, case, config, file): exit status 2."""

    exit_code = 2


class ModeError(RuntimeError):
    """Interpreted and compiled execution mixed in one process (TRITON_INTERPRET is read at @triton.jit time)."""
