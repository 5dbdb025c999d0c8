"""Launch and program-instance events of Triton's interpreter, for instruments (sanitizers, the stepper).

The interpreter runs a launch in ``GridExecutor.__call__``: it copies tensor arguments to the host
(``_init_args_hst``; on a CPU device the host copy shares the tensor's memory), sets the grid
(``set_grid_dim``) and runs each program after ``set_grid_idx(x, y, z)``. Wrapping those four (same names in
Triton 3.6 and 3.9) gives every listener ``launch_begin`` / ``program`` / ``launch_end`` without touching
the kernels. The patches are installed while at least one listener is registered (the memory guard,
guard.py, keeps one for good once the shims are installed).
"""
from __future__ import annotations

import contextlib
import inspect
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Launch:
    """One kernel launch under the interpreter."""

    index: int                       # 0, 1, ... within the process
    kernel: str                      # the jit function's name
    file: str
    args: dict[str, Any]             # argument name -> host value (tensors share memory on a CPU device)
    grid: tuple[int, int, int] = (1, 1, 1)
    programs: int = 0                # programs started so far
    memory: Any = None               # memory.ArgMap, built on demand
    extra: dict[str, Any] = field(default_factory=dict)
    fn: Any = None                   # the kernel's Python function (its source: kernel_stores.py)

    def argmap(self):
        if self.memory is None:
            from tritondbg.interp.memory import ArgMap

            self.memory = ArgMap.from_args(_named_first(self.fn, self.args))
        return self.memory


def _named_first(fn, args: dict) -> dict:
    """``args`` with the tensors the kernel's code never names after the others, where two tensor arguments share
    memory: an address in both is told as the one the kernel writes through (helper-107: TransformerEngine hands
    its output twice, once to a slot kept for JAX's aliasing, and findings named the slot)."""
    from tritondbg.interp.memory import overlapping

    if fn is None or not overlapping(args):  # no two tensor arguments overlap (a view of one, too)
        return args
    from tritondbg.interp import kernel_stores

    unused = {n for n, v in args.items() if hasattr(v, "data_ptr") and kernel_stores.unused(fn, n)}
    return {**{k: v for k, v in args.items() if k not in unused}, **{k: v for k, v in args.items() if k in unused}}


class Listener:
    """Receives launch events; override what you need."""

    def launch_begin(self, launch: Launch) -> None:
        pass

    def program(self, launch: Launch, pid: tuple[int, int, int]) -> None:
        pass

    def launch_end(self, launch: Launch, error: BaseException | None) -> None:
        pass


_listeners: list[Listener] = []
_saved: dict[str, Any] = {}
_state: dict[str, Any] = {"launch": None, "count": 0, "pid": None, "reverse": False, "rerun": False}


def current_launch() -> Launch | None:
    return _state["launch"]


def current_pid() -> tuple[int, int, int] | None:
    """The program instance running now (read from the interpreter's builder)."""
    from triton.runtime import interpreter as I

    idx = getattr(I.interpreter_builder, "grid_idx", None)
    return tuple(int(i) for i in idx) if idx is not None else None


def _install() -> None:
    from triton.runtime import interpreter as I

    GE, B = I.GridExecutor, I.InterpreterBuilder
    _saved.update(call=GE.__call__, init=GE._init_args_hst, dim=B.set_grid_dim, idx=B.set_grid_idx)
    orig_call, orig_init, orig_dim, orig_idx = _saved["call"], _saved["init"], _saved["dim"], _saved["idx"]

    def _init_args_hst(self, args_dev, kwargs):
        args_hst, kwargs_hst = orig_init(self, args_dev, kwargs)
        try:
            bound = inspect.getcallargs(self.fn, *args_hst, **kwargs_hst)
        except TypeError:
            bound = dict(zip(self.arg_names, args_hst), **kwargs_hst)
        code = getattr(self.fn, "__code__", None)
        launch = Launch(index=_state["count"], kernel=getattr(self.fn, "__name__", "?"),
                        file=code.co_filename if code else "?", args=bound, fn=self.fn)
        _state["count"] += 1
        _state["launch"] = launch
        for lst in list(_listeners):
            lst.launch_begin(launch)
        return args_hst, kwargs_hst

    def __call__(self, *args, **kwargs):
        _state["launch"] = None
        error = None
        try:
            return orig_call(self, *args, **kwargs)
        except BaseException as exc:
            error = exc
            raise
        finally:
            launch = _state["launch"]
            if launch is not None:
                for lst in list(_listeners):
                    lst.launch_end(launch, error)
            _state["launch"] = None

    def set_grid_dim(self, nx, ny, nz):
        orig_dim(self, nx, ny, nz)
        if _state["launch"] is not None:
            _state["launch"].grid = (int(nx), int(ny), int(nz))

    def set_grid_idx(self, x, y, z):
        launch = _state["launch"]
        if _state["reverse"] and launch is not None:  # the last program first (``reversed_programs``)
            gx, gy, gz = launch.grid
            x, y, z = gx - 1 - int(x), gy - 1 - int(y), gz - 1 - int(z)
        orig_idx(self, x, y, z)
        if launch is not None:
            launch.programs += 1
            pid = (int(x), int(y), int(z))
            for lst in list(_listeners):
                lst.program(launch, pid)

    GE.__call__, GE._init_args_hst = __call__, _init_args_hst
    B.set_grid_dim, B.set_grid_idx = set_grid_dim, set_grid_idx


def _uninstall() -> None:
    from triton.runtime import interpreter as I

    GE, B = I.GridExecutor, I.InterpreterBuilder
    GE.__call__, GE._init_args_hst = _saved.pop("call"), _saved.pop("init")
    B.set_grid_dim, B.set_grid_idx = _saved.pop("dim"), _saved.pop("idx")


def attach(listener: Listener) -> None:
    """Register ``listener`` until ``detach`` (installs the patches for the first one)."""
    if not _listeners:
        _install()
    _listeners.append(listener)


def detach(listener: Listener) -> None:
    _listeners.remove(listener)
    if not _listeners:
        _uninstall()


@contextlib.contextmanager
def rerunning():
    """Within the block launches are tritondbg's own runs again of a launch already seen (program/filler_rerun.py,
    poison_rerun.py): what follows one program for the user (``--trace``, ``--watch``, pdb) leaves them out
    (helper-148: a replay with a finding traced its pid three times, the last over the filler's made-up values)."""
    before = _state["rerun"]
    _state["rerun"] = True
    try:
        yield
    finally:
        _state["rerun"] = before


def in_rerun() -> bool:
    return bool(_state["rerun"])


@contextlib.contextmanager
def reversed_programs():
    """Within the block every launch runs its programs in reverse grid order (the interpreter runs them in grid
    order, one after the other; a GPU in any order): a float atomic's sum then adds in another order, so a kernel
    whose result depends on it shows it on the CPU (the determinism gate's second run)."""
    before = _state["reverse"]
    _state["reverse"] = True
    try:
        with listening(Listener()):  # the patches are in place while a listener is
            yield
    finally:
        _state["reverse"] = before


@contextlib.contextmanager
def listening(listener: Listener):
    """Register ``listener`` for the duration of the block."""
    attach(listener)
    try:
        yield listener
    finally:
        detach(listener)
