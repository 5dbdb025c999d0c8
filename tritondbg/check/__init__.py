"""Quality gates (`tritondbg check`): each gate runs a scenario one way and says pass / FAIL / skipped, why."""
