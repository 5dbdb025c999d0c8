"""Start a program with tritondbg attached: the parent's side of program mode.

``run(cmd, cfg)`` runs ``cmd`` in a child process whose environment has:

- ``PYTHONPATH`` starting with ``_bootstrap/`` (its ``sitecustomize.py`` chains to the environment's own
  ``sitecustomize``, then imports ``tritondbg.program.child``, which attaches when triton is imported);
- ``TRITONDBG_PROGRAM``: the settings (JSON: features, run folder, limits);
- ``TRITON_INTERPRET=1`` for the interpreter features.

Subprocesses of the program (pytest-xdist workers, a script that starts Python) inherit all three, so they
are attached too; each writes its own files. The program's stdin, stdout and stderr are the terminal's;
its exit status is returned. ``python``/``python3`` mean the one on PATH, as a shell runs it (an activated
venv's), when that Python has triton; else the Python tritondbg runs in, with a note saying so (helper-132: a
tritondbg installed in a venv of its own ran the program with that venv's torch and triton, silently). Another
command (pytest, torchrun) alike: the one on PATH when its ``#!`` Python can, else the one beside tritondbg's.
"""
from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time

from tritondbg import stops
from tritondbg.errors import UsageError

BOOTSTRAP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_bootstrap")
ENV = "TRITONDBG_PROGRAM"


class ProgramNotFound(Exception):
    pass


_PY_VALUE_OPTIONS = ("-W", "-X")  # python options whose value is the next argument


def _script(args: list[str]) -> str | None:
    """The script a ``python ARGS`` command runs, or None (``-m``, ``-c``, stdin, only options)."""
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-m", "-c", "-") or a.startswith(("-m", "-c")) and len(a) > 2 and a[1] in "mc":
            return None
        if a in _PY_VALUE_OPTIONS:
            i += 2
            continue
        if a.startswith("-"):
            i += 1
            continue
        return a
    return None


def _is_python(name: str) -> bool:
    return re.fullmatch(r"python(3(\.\d+)?)?", name) is not None


def _script_there(cmd: list[str]) -> None:
    """A python command's script must exist: one line before anything runs (python's own error came after a run
    folder was made)."""
    script = _script(cmd[1:])
    if script is not None and not os.path.isfile(script):
        raise ProgramNotFound(f"{script}: no such file (the Python script the command `{shlex.join(cmd)}` would run; "
                              f"looked for from {os.getcwd()})")


_MIN_TRITON = (3, 4)  # pyproject's triton>=3.4
_PROBE = """import importlib.metadata as m, importlib.util as u, sys
v = ""
if u.find_spec("triton"):
    v = "?"  # found under a name not below: taken as it is
    for d in ("triton", "pytorch-triton", "pytorch-triton-rocm", "pytorch-triton-xpu", "triton-nightly"):
        try:
            v = m.version(d)
            break
        except Exception:
            pass
print(sys.prefix, v, "%d.%d" % sys.version_info[:2], sep="\\n")"""
_probed: dict[str, str | None] = {}
_notes: list[str] = []  # what run() says before the start (which Python runs the program, and why)


def _unusable(python: str) -> str | None:
    """Why the Python ``python`` cannot run a program under tritondbg (no triton, one older than 3.4, a Python
    older than 3.10), or None when it can (or when asking it failed: it then fails as it would alone)."""
    if python not in _probed:
        try:
            out = subprocess.run([python, "-c", _PROBE], capture_output=True, text=True, timeout=60,
                                 stdin=subprocess.DEVNULL).stdout.split("\n")
            prefix, version, py = out[0], out[1], out[2]
        except (OSError, subprocess.SubprocessError, IndexError):
            _probed[python] = None
            return None
        nums = tuple(int(n) for n in re.findall(r"\d+", version)[:2]) or _MIN_TRITON
        pynum = tuple(int(n) for n in py.split("."))
        if not version:
            why = "has no triton"
        elif nums < _MIN_TRITON:
            why = f"has triton {version} (tritondbg needs 3.4 or newer)"
        elif pynum < (3, 10):
            why = f"is Python {py} (tritondbg needs 3.10 or newer)"
        else:
            why = None
        _probed[python] = why and f"{why} ({prefix})"
    return _probed[python]


def _python(exe: str) -> str:
    """The Python a ``python`` command runs: the one on PATH where it is another environment's and can run the
    program, else this one (with a note)."""
    found = shutil.which(exe)
    mine = sys.executable
    if found is None or os.path.dirname(os.path.abspath(found)) == os.path.dirname(os.path.abspath(mine)):
        return mine
    why = _unusable(found)
    if why is None:
        return found
    _notes.append(f"`{exe}` on your PATH ({found}) {why}: the program runs in tritondbg's own Python ({mine}); "
                  f"give a Python's path after -- to choose another")
    return mine


def _shebang_python(path: str) -> str | None:
    """The Python a console script (pytest, torchrun) starts: its ``#!`` line's, or None for another file."""
    try:
        with open(path, "rb") as f:
            line = f.readline(512).decode(errors="replace")
    except OSError:
        return None
    words = line[2:].split() if line.startswith("#!") else []
    if words and os.path.basename(words[0]) == "env":
        words = [w for w in words[1:] if not w.startswith("-")]
        return shutil.which(words[0]) if words and _is_python(os.path.basename(words[0])) else None
    return words[0] if words and _is_python(os.path.basename(words[0])) and os.path.isfile(words[0]) else None


def _command(exe: str) -> str | None:
    """Where a command (pytest, torchrun) is: on PATH where that one's Python can run the program, else beside
    tritondbg's Python (a venv's console scripts, the venv not activated), else on PATH."""
    beside = shutil.which(exe, path=os.path.dirname(sys.executable))
    found = shutil.which(exe)
    if beside is None or found is None or os.path.abspath(beside) == os.path.abspath(found):
        return beside or found
    python = _shebang_python(found)
    if python is not None and _unusable(python) is None:
        return found
    if python is not None:
        _notes.append(f"`{exe}` on your PATH ({found}) runs a Python that {_unusable(python)}: the one beside "
                      f"tritondbg runs ({beside}); give a path after -- to choose another")
    return beside


def resolve(cmd: list[str], command: str = "capture") -> list[str]:
    """The argv to start: ``python`` -> the Python on PATH when it can run the program (else this one), another
    command as ``_command`` finds it."""
    _notes.clear()
    if not cmd:
        raise UsageError(f"no program to run: put it after --, e.g. `tritondbg {command} -- python model.py`")
    exe = cmd[0]
    if _is_python(exe):
        _script_there(cmd)
        return [_python(exe), *cmd[1:]]
    if exe.endswith(".py") and os.path.isfile(exe) and not os.access(exe, os.X_OK):  # the script, not its python
        raise ProgramNotFound(f"{exe}: a Python script, not an executable: run it with python, "
                              f"`tritondbg {command} -- python {' '.join(cmd)}`")
    if os.sep in exe:
        if not (os.path.isfile(exe) and os.access(exe, os.X_OK)):
            raise ProgramNotFound(f"{exe}: no such executable file")
        if _is_python(os.path.basename(exe)):  # venv/bin/python: its script checked too
            _script_there(cmd)
        return list(cmd)
    found = _command(exe)
    if found is None:
        if exe.startswith("-"):  # `interpret -- --json f python x.py`: an option of tritondbg's after the --
            raise ProgramNotFound(f"{exe}: command not found (tritondbg's options go before the --: "
                                  f"`tritondbg {command} {exe} ... -- PROGRAM`)")
        raise ProgramNotFound(f"{exe}: command not found")
    return [found, *cmd[1:]]


def environment(cfg: dict, interpret: bool) -> dict[str, str]:
    env = dict(os.environ)
    paths = [BOOTSTRAP] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and p != BOOTSTRAP]
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env[ENV] = json.dumps(cfg)
    if interpret:
        env["TRITON_INTERPRET"] = "1"
    env.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    return env


_interrupted: dict = {}  # the last run(): "sigint" when a SIGINT came, "status" the program's own exit status then


def ended(rc: int) -> str:
    """How the program ended, from run()'s status: "exited with status 1", or "was killed by SIGKILL (exit status
    137)" for 128 + a signal's number (the shell's convention; run() returns that for a program a signal ended)."""
    if rc == TIMED_OUT and _interrupted.get("timeout") is not None:
        return f"timed out after {_interrupted['timeout']:g} s (--timeout: stopped with SIGTERM, exit status {rc})"
    if rc == 128 + signal.SIGINT:  # Python ends a KeyboardInterrupt it did not catch by SIGINT: no "killing"
        own = _interrupted.get("status")
        return ("was interrupted (Ctrl-C / SIGINT" + (f"; it exited with status {own})" if own is not None else
                                                     f", exit status {rc})"))
    if rc > 128:
        try:
            return f"was killed by {signal.Signals(rc - 128).name} (exit status {rc})"
        except ValueError:
            pass
    return f"exited with status {rc}"


def _signal_all(pids, sig) -> None:
    for p in pids:
        try:
            os.kill(p, sig)
        except OSError:  # gone already
            pass


def _end_with_parent():
    """Linux: the program gets SIGTERM when tritondbg dies (SIGKILL, the OOM killer), instead of running on as an
    orphan that a later run's sweep of stale folders would delete under it. None elsewhere."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def set_death_signal():
        prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
        if os.getppid() != parent:  # tritondbg died before the prctl: end now
            os.kill(os.getpid(), signal.SIGTERM)
    return set_death_signal


def _terminal_sent_it() -> bool:
    """Whether a SIGINT came from the controlling terminal's Ctrl-C, which the terminal sends to the whole
    foreground process group (the program included): tritondbg's group is the terminal's foreground one."""
    try:
        fd = os.open("/dev/tty", os.O_RDONLY | os.O_NOCTTY)
    except OSError:
        return False
    try:
        return os.tcgetpgrp(fd) == os.getpgrp()
    except OSError:
        return False
    finally:
        os.close(fd)


def _wait_gone(pids, seconds: float, poll: float = 0.05) -> bool:
    """Wait up to ``seconds`` for every process of ``pids`` to end; whether they all did."""
    from tritondbg.program.child import alive

    end = time.monotonic() + seconds
    while any(alive(p) for p in pids):
        if time.monotonic() >= end:
            return False
        time.sleep(poll)
    return True


TIMED_OUT = 124  # the status of a run stopped at its --timeout (as timeout(1) and the kernel form say it)
_GRACE_S = 30.0   # after the --timeout's SIGTERM: the program's tritondbg says where it was, writes what it has


def run(cmd: list[str], cfg: dict, *, interpret: bool = False, timeout: float | None = None) -> int:
    """Run the program attached; returns its exit status (128+N when killed by signal N; ``TIMED_OUT`` when it ran
    past ``timeout`` seconds: then it is sent SIGTERM, where its tritondbg says which launch and line it was in,
    and SIGKILL if it is still there ``_GRACE_S`` later)."""
    argv = resolve(cmd)
    for note in dict.fromkeys(_notes):
        print(f"tritondbg: note: {note}", file=sys.stderr, flush=True)
    env = environment(cfg, interpret)
    try:
        proc = subprocess.Popen(argv, env=env, preexec_fn=_end_with_parent())
    except OSError as exc:
        raise ProgramNotFound(f"{cmd[0]}: {exc.strerror}") from None
    # A terminal's Ctrl-C reaches the program itself (same process group): the parent waits for it to finish
    # writing. A SIGINT sent to tritondbg alone (``kill -INT``, a CI runner) is passed on, as SIGTERM always is.
    previous = {}
    _interrupted.clear()

    def forward(signum, frame):
        if signum == signal.SIGINT:
            _interrupted["sigint"] = True
        if signum != signal.SIGINT or not _terminal_sent_it():
            proc.send_signal(signum)
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            previous[sig] = signal.signal(sig, forward)
        except ValueError:  # not the main thread
            pass
    try:
        try:
            rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            _interrupted["timeout"] = timeout
            tree = [proc.pid, *stops.descendants(proc.pid)]  # (a shell script's python, pytest -n's workers, torchrun's)
            _signal_all(tree, signal.SIGTERM)
            end = time.monotonic() + _GRACE_S
            try:
                proc.wait(timeout=_GRACE_S)
            except subprocess.TimeoutExpired:
                pass
            # a script's python outlives the shell that started it: it gets the same time to say where it was
            # (the SIGKILL right after a shell's exit cut its report off; CI, stop 65)
            _wait_gone(tree[1:], end - time.monotonic())
            _signal_all([*tree, *stops.descendants(proc.pid)], signal.SIGKILL)
            proc.wait()
            return TIMED_OUT
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    rc = 128 - rc if rc < 0 else rc  # the caller says how it ended (ended())
    if _interrupted.get("sigint") and rc != 128 + signal.SIGINT:
        # a program that handles Ctrl-C and exits with a status of its own (pytest: 2, tritondbg's own "bad usage"
        # status; helper-82): the run was interrupted, and the status says so
        _interrupted["status"] = rc
        rc = 128 + signal.SIGINT
    return rc
