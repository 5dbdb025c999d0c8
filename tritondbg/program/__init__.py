"""Program mode: tritondbg attached to any Python program (`tritondbg capture|interpret -- CMD`).

- ``launcher.py``: the parent starts the program with ``_bootstrap/`` (a ``sitecustomize``) on its
  PYTHONPATH and its settings in ``TRITONDBG_PROGRAM``;
- ``child.py``: in the program, attaches when triton is imported and writes results to the run folder;
- ``attach.py``: the one launch-interception mechanism (observers around every launch; Triton hooks chained);
- ``capture.py`` / ``replay.py``: a launch saved as a reproducer / a reproducer loaded as a Scenario
  (``kernel_module.py``: its kernel found again);
- ``checker.py``: the interpreter's instruments on every launch;
- ``modes.py``: the commands as keyword functions (read the run folder, print, exit status).

Nothing here imports torch or triton at import time.
"""
