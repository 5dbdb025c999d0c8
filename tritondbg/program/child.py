"""The program's side of program mode: read the settings, attach when triton is imported, write results.

Settings come from ``TRITONDBG_PROGRAM`` (JSON, written by ``launcher.py``)::

    {"run_dir": "...", "features": ["capture"] | ["interpret"] | [], "max_per_kernel": 1, "max_mb": 256,
     "kernels": ["name", ...], "capture_on_finding": false, "sanitize": true}

Nothing is imported (no torch, no triton) until the program imports triton: a meta-path finder waits for
``import triton`` and installs the observers right after triton's own ``__init__`` ran, before the program's
first ``@triton.jit`` (TRITON_INTERPRET is already in the environment). Results go to files in ``run_dir``
as they happen (``findings.jsonl``, ``captures.jsonl``: a crash or a kill keeps them) and a per-process
``summary-<pid>.json`` at exit; the parent (``modes.py``) reads them after the program exited.
"""
from __future__ import annotations

import json
import os
import re
import sys
import threading
import time

ENV = "TRITONDBG_PROGRAM"
_state: dict = {"config": None, "observers": [], "notes": [], "started": False}
_lock = threading.Lock()


def config() -> dict:
    if _state["config"] is None:
        _state["config"] = json.loads(os.environ.get(ENV) or "{}")
    return _state["config"]


def say(line: str) -> None:
    """A line for the user's terminal even while the program captures stderr (pytest does, per test: the line of
    a Ctrl-C'd launch went with the test's captured output): written to the stderr the program started with."""
    fd = _state.get("stderr_fd")
    try:
        if fd is None:
            raise OSError
        os.write(fd, (line + "\n").encode(errors="replace"))
    except OSError:
        print(line, file=sys.stderr, flush=True)


def note(text: str) -> None:
    """A line for the run's summary (a skipped capture, an argument that could not be saved)."""
    _state["notes"].append(text)


def append(name: str, record: dict) -> None:
    """One JSON line to ``run_dir/name`` (appends are whole lines: safe across processes)."""
    line = json.dumps(record, default=str) + "\n"
    with _lock, open(os.path.join(config()["run_dir"], name), "a") as f:
        f.write(line)


class AfterImport:
    """A meta-path hook: ``then(module)`` right after module ``name`` was executed (``import triton``: attach;
    Inductor's runtime: wrap its launcher, ``inductor.py``). It stays in ``sys.meta_path`` until then:
    ``importlib.util.find_spec("triton")`` (torch asks so whether triton is installed, on a CUDA machine) calls
    ``find_spec`` without importing; a hook that stood down there let the import past (a torch.compile'd model on
    the H200: nothing attached, 0 launches)."""

    def __init__(self, name: str, then):
        self.name, self.then = name, then

    def find_spec(self, name, path=None, target=None):
        if name != self.name:
            return None
        spec = None
        for finder in sys.meta_path:
            if finder is self:
                continue
            find = getattr(finder, "find_spec", None)
            spec = find(name, path, target) if find is not None else None
            if spec is not None:
                break
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        orig = spec.loader.exec_module

        def exec_module(module):
            orig(module)
            if self in sys.meta_path:
                sys.meta_path.remove(self)
            self.then(module)
        spec.loader.exec_module = exec_module
        return spec


def _sibling(name: str):
    """tritondbg.program.<name>, loaded by path as the bootstrap loads this module: importing the tritondbg
    package before the program's pytest could rewrite its tritondbg plugin makes pytest warn."""
    full = f"tritondbg.program.{name}"
    mod = sys.modules.get(full)
    if mod is None:
        import importlib.util

        spec = importlib.util.spec_from_file_location(full, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                                         f"{name}.py"))
        mod = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = mod
        spec.loader.exec_module(mod)
    return mod


def _interpreting() -> bool:
    return os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")


def _exits():
    return _sibling("exits")


INTERPRET_RESET = "the program set TRITON_INTERPRET"  # the start of _keep_interpreting's note (modes prints it)


def _keep_interpreting() -> None:
    """Under ``interpret --``: a program that set TRITON_INTERPRET=0 itself before importing torch or triton (for a
    GPU run of its own) had its kernels compiled for a GPU ("0 active drivers"; helper-132): set back, and said."""
    if "interpret" in config().get("features", ()) and not _interpreting():
        note(f"{INTERPRET_RESET}={os.environ.get('TRITON_INTERPRET', '')!r} before importing "
             "torch / triton: `tritondbg interpret` set it back to 1, so its kernels ran in the interpreter")
        os.environ["TRITON_INTERPRET"] = "1"


def _cuda_as_cpu(module=None) -> None:
    """Interpreting without a GPU: the program's "cuda" tensors are made on the CPU (``cpu_device.py``); and
    under ``interpret --`` with the sanitizers, its torch reads of what a launch left unwritten are watched
    (``readwatch.py``). Both torch function modes go at the bottom of the program's stack, before its own."""
    _keep_interpreting()
    try:
        if _sibling("cpu_device").install():
            _hint_on_cuda_tensors()  # (a program that never imports Triton: torch.Generator(device="cuda"))
            _sibling("tracebacks").install()  # an op's error through the modes' frames: the program's traceback
            if _interpreting():  # torch.cuda's queries answer before Triton is imported (set_device, properties)
                from tritondbg import standin

                standin.answer_torch_cuda(config().get("arch"))
    except Exception as exc:  # noqa: BLE001 - never stop the program
        note(f"could not serve CUDA tensors on the CPU: {type(exc).__name__}: {exc}")
    cfg = config()
    if "interpret" in cfg.get("features", ()) and cfg.get("sanitize", True):
        try:
            _sibling("readwatch").install()
        except Exception as exc:  # noqa: BLE001
            note(f"could not watch the program's reads of unwritten memory: {type(exc).__name__}: {exc}")


def start(phases: dict | None = None) -> None:
    """Called by the bootstrap sitecustomize: attach now if triton is loaded, else when it is imported.
    ``phases``: ``time.monotonic()`` stamps of the bootstrap (the profile feature reports tritondbg's cost)."""
    cfg = config()
    if not cfg.get("run_dir"):
        return
    if _compile_worker():
        os.environ.pop(ENV, None)  # nor its own workers
        return
    try:
        _state["stderr_fd"] = os.dup(2)  # before any capture of the program's (``say``)
    except OSError:
        pass
    cfg["_phases"] = dict(phases or {})
    cfg["_phases"]["child_loaded"] = time.monotonic()
    if "interpret" in cfg.get("features", ()):
        os.environ["TRITON_INTERPRET"] = "1"
    if _interpreting():  # interpret --, capture -- without a GPU
        if "torch" in sys.modules:
            _cuda_as_cpu()
        else:
            sys.meta_path.insert(0, AfterImport("torch", _cuda_as_cpu))
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    exits = _exits()
    exits.on_exit(write_summary)  # at exit, os._exit and SIGTERM (multiprocessing's workers end so)
    exits.on_fork(_count_from_here)
    if "triton" in sys.modules:
        attach_now()
    else:
        sys.meta_path.insert(0, AfterImport("triton", lambda module: attach_now()))


def _compile_worker() -> bool:
    """torch.compile's compile workers (``torch/_inductor/compile_worker/__main__.py``) compile, never launch:
    attached, each wrote a summary and the profile table labelled the program's kernels with pids."""
    argv0 = os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    return os.path.basename(argv0) == "__main__.py" and os.path.basename(os.path.dirname(argv0)) == "compile_worker"


def attach_now() -> None:
    if _state["started"]:
        return
    _state["started"] = True
    try:
        _keep_interpreting()
        _attach(config())
    except Exception as exc:  # noqa: BLE001 - never stop the program
        print(f"tritondbg: could not attach: {type(exc).__name__}: {exc}", file=sys.stderr)
        note(f"could not attach: {type(exc).__name__}: {exc}")


def _attach(cfg: dict) -> None:
    cfg.setdefault("_phases", {})["attach_start"] = time.monotonic()
    from tritondbg.program import attach

    features = cfg.get("features", [])
    observers = []
    if "interpret" in features:
        from tritondbg.program.checker import Checker

        observers.append(Checker(cfg))
        _state["checker"] = observers[-1]  # (the half-precision hint asks whether it found anything)
        if cfg.get("sanitize", True):  # torch.empty & co. hand out marked memory from here on (uninit findings)
            from tritondbg.interp import initcheck

            initcheck.install()
    elif "capture" in features:
        from tritondbg.program.capturer import Capturer

        observers.append(Capturer(cfg))
        if _interpreting() and cfg.get("sanitize", True):  # capture without a GPU: torch.empty's memory marked
            from tritondbg.interp import initcheck           # too, so a reproducer tells what its launch left

            initcheck.install()                                # unwritten (its replay reports the band)
    elif "profile" in features:           # tritondbg profile -- CMD (tritondbg/profile/program.py)
        from tritondbg.profile.program import ProgramProfiler

        observers.append(ProgramProfiler(cfg))
    elif "observe" in features:           # attached, nothing to do (the overhead benchmark)
        observers.append(attach.Observer())
    attach.after_launch[0] = checkpoint   # the counts of a process that dies of a signal (any feature)
    if not observers:
        attach.install()                  # launch counts only
    for obs in observers:
        attach.add_observer(obs)
    _state["observers"] = observers
    from tritondbg.program import tracebacks

    tracebacks.install()
    # After attach: the stand-in wraps InterpretedFunction.run over ours, and a later re-install of it (a
    # program that calls tritondbg's runner.set_mode, as tritondbg's own tests do) puts ours back under it.
    if _interpreting():
        from tritondbg import standin        # host code asking for a GPU gets the CPU stand-in's answers
        from tritondbg.interp import shims   # the interpreter's fixes (float scalars, bf16, memory guard, prints)

        shims.install()
        standin.install(cfg.get("arch") or standin.current())
        _pin_autotuners()
        _hint_on_cuda_tensors()


# what torch says when a CPU-only build (or a machine without a GPU) is asked for a CUDA tensor
_NO_CUDA = ("Torch not compiled with CUDA enabled", "Found no NVIDIA driver", "no CUDA GPUs are available",
            "Tried to instantiate dummy base class", "Cannot get CUDA generator", "Cannot access accelerator device")


def _ends_in_torch_cuda(tb) -> bool:
    """Whether the error was raised inside ``torch.cuda`` (``torch.cuda.Stream()``, ``reset_peak_memory_stats``)."""
    from tritondbg.errors import raised_in

    last = raised_in(tb)
    torch = sys.modules.get("torch")
    if not last or torch is None:
        return False
    return os.path.abspath(last).startswith(os.path.join(os.path.dirname(torch.__file__), "cuda") + os.sep)


def _half_reference(tb, value) -> bool:
    """An assertion that failed where half-precision tensors are in hand (the innermost frame's locals, and lists
    of them), with no finding from the checker: a comparison of a kernel with a CPU torch reference."""
    checker = _state.get("checker")
    if checker is None or sum(getattr(checker, "findings", {}).values()):
        return False
    torch = sys.modules.get("torch")
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if torch is None or tb is None:
        return False
    if not _compares_values(tb, value):
        return False
    half = (torch.float16, torch.bfloat16)
    for v in list(tb.tb_frame.f_locals.values()):
        for t in (v if isinstance(v, (list, tuple)) else (v,))[:64]:
            if isinstance(t, torch.Tensor) and t.dtype in half:
                return True
    return False


_VALUE_WORDS = re.compile(r"allclose|assert_close|isclose|equal|\berr|diff|abs\(|tol\b|atol|rtol|max\(")
_SHAPE_WORDS = re.compile(r"\.shape|\.size\(|\.dim\(|\.ndim|\.dtype|\.device|is_contiguous|\.stride\(|numel\(")


def _compares_values(tb, value) -> bool:
    """Whether the failed assertion compares values (torch.testing's "not close", an allclose, an error against a
    tolerance), not shapes or dtypes (helper-106: lmdeploy's wrapper asserting the weight's size was told as an
    ulp of CPU half precision)."""
    import linecache

    text = str(value)
    if any(k in text for k in ("not close", "Mismatched elements", "not equal", "difference")):
        return True
    import ast

    line = linecache.getline(tb.tb_frame.f_code.co_filename, tb.tb_lineno).strip()
    try:  # the assertion's test, not its message (helper-110: a message naming out.shape)
        node = ast.parse(line).body[0]
        test = ast.unparse(node.test) if isinstance(node, ast.Assert) else line
    except (SyntaxError, IndexError):  # an assertion over several lines: the line as it is
        test = line
    if _SHAPE_WORDS.search(test):
        return False
    return bool(_VALUE_WORDS.search(test)) or "==" in test or "!=" in test


def _dynamo_traced_a_kernel(value) -> bool:
    """Whether ``value`` is torch.compile's failure on a user's Triton kernel it met while tracing (its
    triton_kernel_wrap in the chain of errors)."""
    if not type(value).__module__.startswith("torch._dynamo"):
        return False
    import traceback

    try:
        text = "".join(traceback.format_exception(value))
    except Exception:  # noqa: BLE001 - no hint rather than an error in the hook
        return False
    return "triton_kernel_wrap" in text


def _version_hint(value) -> str:
    """What to do when this Triton lacks what the program imports (triton.ops, gone since Triton 3.0)."""
    from tritondbg.errors import version_hint

    return version_hint(str(value))


def _hint_on_cuda_tensors() -> None:
    """An uncaught error from torch about CUDA (``torch.randn(..., device="cuda")`` on a machine without one)
    ends with one tritondbg line saying what to do: the program's own traceback is left as it is. Once."""
    if _state.get("hinting"):
        return
    _state["hinting"] = True
    previous = sys.excepthook

    def hook(kind, value, tb):
        previous(kind, value, tb)
        cpu = sys.modules.get("tritondbg.program.cpu_device")
        asks = sys.modules.get("tritondbg.program.cuda_asks")
        # an error a library's CPU branch may raise (DyT backward: UnboundLocalError: NUM_SMS), not its validation
        # of the program's input (ValueError) or a missing package (ImportError)
        branch = isinstance(value, Exception) and not isinstance(value, (ValueError, ImportError, OSError))
        asked = asks.library_asked(tb) if asks is not None and branch else None
        in_torch_cuda = _ends_in_torch_cuda(tb)
        from tritondbg.errors import KernelError  # (tritondbg's own words: a stand-in's or a kernel's error)

        version = _version_hint(value) if isinstance(value, (ImportError, AttributeError)) else ""
        if _dynamo_traced_a_kernel(value):
            # (helper-112: modded-nanogpt's polar_express, @torch.compile(fullgraph=True) around its Triton kernels)
            print("tritondbg: torch.compile traced a Triton kernel above: under the interpreter a kernel is an "
                  "InterpretedFunction, which torch.compile cannot trace (plain TRITON_INTERPRET=1 fails too). Rerun "
                  "with TORCHDYNAMO_DISABLE=1: the compiled functions then run eagerly, their Triton kernels checked "
                  "by tritondbg (torch.compile's own generated kernels are not made then)", file=sys.stderr)
        elif version:
            print(f"tritondbg: {version}", file=sys.stderr)
        elif asked is not None:
            from tritondbg.interp.frames import site_name

            print(f"tritondbg: the code above asked torch.cuda.is_available() at {site_name(asked[0])}:{asked[1]} "
                  f"({asked[2]}) and heard False (no GPU here: its \"cuda\" tensors are made on the CPU), so it may "
                  "have taken its CPU branch: an error of that branch is not a kernel's", file=sys.stderr)
        elif cpu is not None and cpu.moved() and isinstance(value, NotImplementedError) \
                and "with arguments from the 'CPU' backend" in str(value):
            # (helper-79: a library's CUDA path, taken since its tensors say cuda:0, calls an op only CUDA has)
            print("tritondbg: the torch op above has no CPU kernel: under the interpreter the program's \"cuda\" "
                  "tensors are CPU tensors that say cuda:0 to its code, so code on its CUDA path reaches ops only "
                  "torch's CUDA build has; run that part compiled on a GPU", file=sys.stderr)
        elif cpu is not None and cpu.moved() and isinstance(value, Exception) \
                and "cuda" in str(value).lower().replace(cpu._TAG, "") and not isinstance(value, KernelError) \
                and not in_torch_cuda and not any(text in str(value) for text in _NO_CUDA):  # (not our tag's name)
            # a library's own check of the tensors' device (fla: "Only support CUDA/NPU/XPU tensors")
            print("tritondbg: the error above names CUDA: under the interpreter every tensor is on the CPU; those the "
                  "program makes on \"cuda\" (or on Triton's get_active_torch_device(), or moves there) say cuda:0 "
                  "to its code, the others (made without a device, or on \"cpu\") cpu: code that insists on CUDA "
                  "tensors refuses those, and a comparison of the two kinds fails where a GPU's would pass; make them "
                  "on \"cuda\", or run it compiled on a GPU", file=sys.stderr)
        elif cpu is not None and cpu.moved() and isinstance(value, NotImplementedError) \
                and "_cpu\"" in str(value) and "not implemented for" in str(value):
            # (helper-62: triton_kernels' routing_torch, torch.histc on an int tensor: "histogram_cpu" not
            # implemented for 'Int'; on CUDA it is)
            print("tritondbg: the torch op above has no CPU kernel for that dtype: under the interpreter the "
                  "program's \"cuda\" tensors are made on the CPU, where torch's CPU build lacks some of what its "
                  "CUDA build has (check that CUDA has one: torch.randn_like on bool has none either); "
                  "run that part compiled on a GPU, or give the op a dtype the CPU takes", file=sys.stderr)
        elif cpu is not None and cpu.moved() and isinstance(value, AssertionError) and _half_reference(tb, value) \
                and not re.search(r"\bnan\b", str(value), re.I):  # (an ulp is no NaN: helper-97; an inf
            # relative difference is: a reference element of 0 and a result an ulp off)
            # (helpers 79 and 81: Triton's tutorials 05 and 08 fail their own fp16 checks here, where CPU torch's
            # fp16 layer_norm backward and matmul, the references, are the side that is off)
            print("tritondbg: the program's own check above failed on float16 / bfloat16 tensors with no finding "
                  "from tritondbg: its torch reference ran on the CPU here, whose half-precision ops (a matmul's "
                  "accumulation and rounding, layer_norm's backward) can differ from CUDA's by an ulp or more; "
                  "compare both sides with a float32 computation (x.float()) to see which one is off",
                  file=sys.stderr)
        elif in_torch_cuda or any(text in str(value) for text in _NO_CUDA):
            print("tritondbg: the program used a CUDA-only part of torch that has no CPU stand-in (under the "
                  "interpreter tensors asked for on \"cuda\" are made on the CPU, and CUDA streams, events, "
                  "generators, RNG states and memory figures stand in; CUDA graphs do not): run that part eagerly "
                  "(no graph capture), or run the program compiled on a GPU", file=sys.stderr)

    sys.excepthook = hook


def _pin_autotuners() -> None:
    """Under the interpreter every autotuned kernel runs one config, as ``tritondbg interpret KERNEL`` runs it
    (``pinning.Pinning``: the first config its autotuner would try after its own pruning that can run): without
    a GPU, the autotuner would time every config on the CPU (three runs each, unchecked by the sanitizers,
    writing the outputs several times) and keep whichever the CPU timed fastest, a pick that changes from run
    to run. The pinning stays for the program's life; ``write_summary`` reports what each kernel ran."""
    import contextlib

    from tritondbg.pinning import Pinning

    pinning = Pinning({}, pin_all=True)
    stack = contextlib.ExitStack()
    stack.enter_context(pinning.active())
    _state["pinning"], _state["pin_stack"] = pinning, stack


def pinned_configs() -> dict:
    """kernel name -> the config strings it ran under the interpreter's pinning (``_pin_autotuners``): one per
    autotune key whose pruning kept another first config."""
    pinning = _state.get("pinning")
    if pinning is None:
        return {}
    from tritondbg.configs import config_str

    return {name: [config_str(c) for c in ran] for name, ran in pinning.ran.items()
            if pinning.sources.get(name) == "default"}


def _nothing_to_say() -> bool:
    """A process that never imported triton, heard no torch.cuda question, noted nothing and compiled no
    torch.compile graph (its summary would be dropped below), told without importing anything."""
    if _state["started"] or _state["notes"]:
        return False
    moved = sys.modules.get("tritondbg.program.cpu_device")
    asks = sys.modules.get("tritondbg.program.cuda_asks")
    if (moved is not None and moved.moved()) or (asks is not None and asks.asked()):
        return False
    return "torch._dynamo.utils" not in sys.modules


def _summary() -> dict:
    from tritondbg.program import attach

    launches = attach.counts()
    notes = list(_state["notes"])
    from tritondbg.program.inductor import compile_note

    hint = compile_note(launches, _interpreting())
    if hint:
        notes.append(hint)
    data = {"pid": os.getpid(), "argv": sys.argv, "launches": launches, "notes": notes,
            "compile_info": attach.compile_info, "pinned": pinned_configs()}
    moved = sys.modules.get("tritondbg.program.cpu_device")
    if moved is not None and moved.moved():
        data["cuda_on_cpu"] = moved.moved()
        data["amp_off"] = moved._state.get("amp_off", 0)
        data["cuda_ordinals"] = moved.ordinals()
    version_read = sys.modules.get("tritondbg.program.cuda_version")
    if version_read is not None and version_read.reads():  # where it read torch.version.cuda (None)
        data["cuda_version_read"] = version_read.reads()
    asks = sys.modules.get("tritondbg.program.cuda_asks")
    if asks is not None and asks.asked():  # where it heard torch.cuda.is_available() answer False
        data["cuda_asked"] = asks.asked()
    standin = sys.modules.get("tritondbg.standin")
    if standin is not None and standin.refused():  # launches the --arch target's compiler refused: no program ran
        data["refused"] = standin.refused()
    if standin is not None and standin.target_read():  # host code that read the default target (no --arch)
        data["target_read"] = standin.target_read()
    checked = sys.modules.get("tritondbg.interp.gpu_compile")  # (imported by the first interpreted launch)
    if checked is not None and checked.unchecked:
        data["compile_unjudged"] = checked.counts()
        data["compile_unjudged_why"] = dict(checked.reasons)
    reads = sys.modules.get("tritondbg.interp.race_reads")
    if reads is not None and reads.capped:  # launches whose loads passed the read race record's bound
        data["read_race_capped"] = dict(reads.capped)
    for obs in _state["observers"]:
        summary = getattr(obs, "summary", None)
        if summary is not None:
            data.update(summary())
    return data


def _count_from_here() -> None:
    """In a forked child: what the parent counted so far, taken off this process's summary (the parent's has it)."""
    if "triton" in sys.modules and _state["started"]:
        _state["at_fork"] = _summary()


def _minus(now, before):
    """``now`` less ``before``: per-key for count dicts, the new tail of lists, numbers subtracted."""
    if isinstance(now, dict) and isinstance(before, dict):
        out = {}
        for k, v in now.items():
            if k in before and isinstance(v, (int, float)) and isinstance(before[k], (int, float)):
                if v - before[k]:
                    out[k] = v - before[k]
            else:
                out[k] = v
        return out
    if isinstance(now, list) and isinstance(before, list):
        return now[len(before):]
    if isinstance(now, (int, float)) and isinstance(before, (int, float)) and not isinstance(now, bool):
        return now - before
    return now


CHECKPOINT_S = 1.0  # how stale the launch counts of a process killed by SIGSEGV / SIGKILL can be


def checkpoint() -> None:
    """After a launch: the summary, written at most once a second (the first launch's at once), so a process that
    dies of a signal no exit hook sees (a segfault in the program's C code, SIGKILL) still reports its launches;
    it reported "0 launch(es)" beside the findings of the launches it made."""
    now = time.monotonic()
    if now - _state.get("checkpoint_at", -CHECKPOINT_S) >= CHECKPOINT_S:
        _state["checkpoint_at"] = now
        write_summary(final=False)


def alive(pid) -> bool:
    """Whether process ``pid`` runs (None: True): there and no zombie. Imports nothing: it runs at exit, where an
    import lost CPython's end by SIGINT after Ctrl-C (status 1 for 130; CI, session 54). launcher.py asks it too."""
    if not pid:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # (another user's process: alive)
        return True
    try:  # killed but not reaped yet (the SIGTERM of its death comes before its parent's wait): a zombie, "Z"
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rpartition(")")[2].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return True


def write_summary(final: bool = True) -> None:
    """At exit: launches per kernel, per-kernel finding counts, notes (one file per process; a forked child's
    counts start at the fork). ``final`` False: a checkpoint while the program runs (a floor of its counts, if
    the process dies where no exit hook runs)."""
    cfg = config()
    if not cfg.get("run_dir") or not os.path.isdir(cfg["run_dir"]):
        return
    if cfg.get("temporary") and not alive(cfg.get("owner")):  # tritondbg was killed (SIGKILL, the OOM killer):
        import shutil  # nobody reads its temporary folder now, nor removes it
        shutil.rmtree(cfg["run_dir"], ignore_errors=True)
        return
    if _nothing_to_say():
        return  # (without importing tritondbg's modules at exit: that turned an uncaught Ctrl-C's 130 into 1)
    data = _summary()
    if not _state["started"] and not data["notes"] and not any((data["launches"] or {}).values()) and \
            not data.get("cuda_asked"):
        return  # never imported triton (multiprocessing's resource tracker, a `python -c` helper): nothing to say
        # (one that asked torch.cuda.is_available() says where: a test suite that skipped every test on it)
    base = _state.get("at_fork")
    if base is not None:
        data = {k: (v if k in ("pid", "argv", "compile_info", "pinned") else _minus(v, base.get(k)))
                for k, v in data.items()}
    data["final"] = final
    try:
        path = os.path.join(cfg["run_dir"], f"summary-{os.getpid()}.json")
        with open(path + ".tmp", "w") as f:  # whole or absent: a kill mid-write leaves no half file
            json.dump(data, f, default=str)
        os.replace(path + ".tmp", path)
    except OSError:
        pass
