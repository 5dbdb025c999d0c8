"""Sanitizers: every zoo bug is reported at its `# BUG:` line, its twin and every bundled case report nothing."""
import re
from pathlib import Path

import numpy as np
import pytest
import torch

from tritondbg import loader, runner
from tritondbg.interp import instruments, sanitize

ZOO = Path(__file__).resolve().parent / "zoo"
# numpy warns about the overflow the zoo's overflow kernel is there to make
pytestmark = [pytest.mark.interpreter, pytest.mark.filterwarnings("ignore::RuntimeWarning")]


def bug_line(path: Path) -> tuple[int, str]:
    """The line number and kind of the `# BUG: <kind>` marker of a zoo file."""
    for i, line in enumerate(path.read_text().splitlines(), 1):
        m = re.search(r"# BUG: (\w+)", line)
        if m:
            return i, m.group(1)
    raise AssertionError(f"{path.name} has no '# BUG:' marker")


# the zoo files whose bug a sanitizer finds (other zoo files plant GPU-side bugs for other gates)
ZOO_FILES = sorted(p for p in ZOO.glob("*.py") if bug_line(p)[1] in sanitize.KINDS)


def run(target: str, sanitize_on: bool = True, **kw):
    insts = instruments.build(target, sanitize=sanitize_on)
    return runner.run(target, mode="interpret", instruments=insts, **kw)


def test_zoo_has_the_twelve_bugs():
    kinds = sorted(bug_line(p)[1] for p in ZOO_FILES)
    assert kinds == sorted(["out_of_bounds", "out_of_bounds", "race", "race", "nan_inf", "masked_reduction",
                            "out_of_bounds", "poison", "uninit", "uninit", "uninit", "uninit"]), kinds
    for p in ZOO_FILES:  # each defines a buggy scenario and its twin
        assert loader.load(f"{p}::buggy").name == "buggy" and loader.load(f"{p}::twin").name == "twin"


@pytest.mark.parametrize("path", [p for p in ZOO_FILES if p.stem != "config_bug"], ids=lambda p: p.stem)
def test_zoo_bug_reported_at_its_line(path):
    line, kind = bug_line(path)
    rec = run(f"{path}::buggy")
    assert not rec.passed
    findings = [f for r in rec.results for f in r.findings]
    hits = [f for f in findings if f["kind"] == kind and f["line"] == line and Path(f["file"]) == path]
    assert hits, f"no {kind} finding at {path.name}:{line}; got {[(f['kind'], f['line']) for f in findings]}"
    f = hits[0]
    assert f["severity"] == "error" and (len(f["pid"]) == 3 or f["op"] == "unwritten") and f["message"]
    for r in rec.results:  # one finding per bug and run, not one per program or per lane
        assert len([x for x in r.findings if x["line"] == line]) == 1, r.findings


@pytest.mark.parametrize("path", ZOO_FILES, ids=lambda p: p.stem)
def test_zoo_twin_is_clean(path):
    rec = run(f"{path}::twin", cases="all")
    assert rec.passed, [(r.dtype, r.message) for r in rec.results]
    assert [f for r in rec.results for f in r.findings] == []


def test_missing_mask_passes_the_plain_interpreter_and_fails_sanitized():
    target = f"{ZOO / 'missing_mask.py'}::buggy"
    plain = run(target, sanitize_on=False)  # the output matches: only the guard's count of the lanes it kept out
    assert all(e.passed for e in plain.results[0].errors) and not plain.passed  # says it is no pass
    rec = run(target)
    f = rec.results[0].findings[0]
    assert f["tensor"] == "x_ptr" and f["pid"] == [3, 0, 0]       # 1000 = 3 * 256 + 232: the 4th program
    assert f["offsets"][0] == 1000 and f["lanes"] == 24
    assert "past the end" in f["message"]
    # the full range of the 24 lanes (``offsets`` is a sample of 8), and no "masked off" for a load without mask
    assert f["offset_range"] == [1000, 1023] and "element offsets 1000..1023" in f["message"]
    assert "The load has no mask" in f["message"] and "masked off" not in f["message"]


def test_masked_store_message_says_the_mask_lets_lanes_through():
    f = run(f"{ZOO / 'off_by_one_store.py'}::buggy").results[0].findings[0]
    assert "element offset 300," in f["message"] and "Its mask lets them through" in f["message"]
    assert "skipped these lanes" in f["message"]


def test_zoo_numeric_bugs_have_bf16_variants():
    for name in ("overflow", "masked_variance", "undefined_lanes"):
        case = loader.load(f"{ZOO / name}.py::buggy").cases[0]
        assert "bfloat16" in case.dtypes, name


def test_race_names_both_programs_and_the_element():
    rec = run(f"{ZOO / 'race.py'}::buggy")
    f = next(f for f in rec.results[0].findings if f["kind"] == "race")
    assert f["pid"] != f["other_pid"] and f["tensor"] == "out_ptr" and f["offsets"] == [0]
    assert "out_ptr[0]" in f["message"]


def test_race_between_two_store_lines_pairs_each_pid_with_its_own_line():
    """Program 0 stores its block at one line, program 1 stores into that block at another: the finding's pid
    and line are one program's store, the other pid and line the other's (they were crossed)."""
    rec = run(f"{ZOO / 'race.py'}::two_sites")
    f = next(f for f in rec.results[0].findings if f["kind"] == "race")
    src = (ZOO / "race.py").read_text().splitlines()
    own = next(i + 1 for i, ln in enumerate(src) if "tl.store(y_ptr + offs, tl.load" in ln)
    bug = next(i + 1 for i, ln in enumerate(src) if "tl.store(y_ptr + offs - BLOCK" in ln)
    assert (tuple(f["pid"]), f["line"], tuple(f["other_pid"]), f["other_line"]) == ((0, 0, 0), own, (1, 0, 0), bug)
    assert f"pid (0, 0, 0) (line {own}) and pid (1, 0, 0) (line {bug})" in f["message"], f["message"]


def test_poison_in_bf16_is_a_nan_bit_pattern_and_reaches_the_output():
    rec = run(f"{ZOO / 'undefined_lanes.py'}::buggy", dtype="bfloat16")
    f = rec.results[0].findings[0]
    assert f["kind"] == "poison" and f["tensor"] == "out"
    import triton.language as tl

    p = sanitize.poison_array((4,), tl.bfloat16, np.uint16, 5)
    assert p.dtype == np.uint16 and int(p[0]) == 0x7FC0 | 5
    as_f32 = (p.astype(np.uint32) << 16).view(np.float32)
    assert np.isnan(as_f32).all()
    assert (sanitize.payload_ids(p, "bf16") == 5).all()


@pytest.mark.parametrize("kind, np_dtype", [("fp32", np.float32), ("fp16", np.float16), ("fp64", np.float64)])
def test_poison_payload_survives_arithmetic_and_casts(kind, np_dtype):
    import triton.language as tl

    ty = {"fp32": tl.float32, "fp16": tl.float16, "fp64": tl.float64}[kind]
    p = sanitize.poison_array((3,), ty, np_dtype, 17)
    assert np.isnan(p).all() and (sanitize.payload_ids(p, kind) == 17).all()
    moved = (p * np_dtype(2.0) + np_dtype(1.0)).astype(np.float32).astype(np_dtype)
    assert (sanitize.payload_ids(moved, kind) == 17).all()


def test_config_bug_only_some_configs_fail():
    from tritondbg.interp.sweep import run_all_configs

    line, _ = bug_line(ZOO / "config_bug.py")
    rec = run_all_configs(f"{ZOO / 'config_bug.py'}::buggy", instruments=instruments.build("add"))  # no --break: the target is not loaded
    assert len(rec.results) == 3
    failed = [r for r in rec.results if not r.passed]
    assert [r.extra["sweep"]["config"]["BLOCK"] for r in failed] == [128]      # 128 does not divide 192
    oob = [f for f in failed[0].findings if f["kind"] == "out_of_bounds"]
    assert oob and oob[0]["line"] == line and oob[0]["pid"] == [3, 0, 0]        # the last row reads past x
    assert rec.extra["sweep"]["failures"][0]["config"].startswith("BLOCK=128")
    twin = run_all_configs(f"{ZOO / 'config_bug.py'}::twin", instruments=instruments.build("add"))  # no --break: the target is not loaded
    assert twin.passed and not twin.extra["sweep"]["failures"]


@pytest.mark.parametrize("name", loader.bundled_names())
def test_no_false_alarm_on_bundled_kernels(name):
    rec = run(name, cases="all")
    assert rec.results
    findings = [(r.case, r.dtype, f["kind"], f["line"], f["message"]) for r in rec.results for f in r.findings]
    assert findings == []
    assert rec.passed, [(r.case, r.dtype, r.message) for r in rec.results if not r.passed]


def test_no_false_alarm_on_the_user_scenario():
    rec = run(str(Path(__file__).parent / "data" / "user_kernels" / "my_cases.py"), cases="all")
    assert rec.passed and not [f for r in rec.results for f in r.findings]


def test_wild_pointers_are_masked_not_dereferenced():
    path = Path(__file__).parent / "interp_data" / "shim_cases.py"
    rec = run(f"{path}::wild")
    kinds = {(f["kind"], f["op"], f["tensor"]) for f in rec.results[0].findings}
    assert kinds == {("out_of_bounds", "load", "x_ptr"), ("out_of_bounds", "store", "y_ptr")}
    store = next(f for f in rec.results[0].findings if f["op"] == "store")
    assert store["offsets"][0] == -1_000_000_000 and "before the start" in store["message"]


def test_a_warning_is_printed_and_counted_as_a_warning_not_a_finding():
    """A store of one value by every program (a done flag) is a warning: the run passes. It printed as "race ..."
    and counted "1 finding(s)" on a PASS, where `check`'s sanitize gate said "no finding"."""
    import io

    from rich.console import Console

    from tritondbg.record import CaseResult, RunRecord
    from tritondbg.render.console import print_case, print_summary

    warn = {"kind": "race", "severity": "warning", "file": "k.py", "line": 8, "pid": [0, 0, 0], "tensor": "flag_ptr",
            "message": "same value"}
    r = CaseResult(kernel="flag", case="tiny", dtype="float32", mode="interpret", device="cpu", seed=0, params={},
                   findings=[warn])
    record = RunRecord(command="interpret flag", results=[r])
    record.extra["sanitizers"] = True
    buf = io.StringIO()
    con = Console(file=buf, width=200, highlight=False)
    print_case(con, r)
    print_summary(con, record)
    text = buf.getvalue()
    assert "warning: race k.py:8 pid (0, 0, 0) flag_ptr" in text, text
    assert "1/1 passed, sanitizers on: no finding, 1 warning(s)" in text, text
    r.findings.append({**warn, "severity": "error", "kind": "out_of_bounds"})
    buf.seek(0), buf.truncate()
    print_summary(con, record)
    assert "sanitizers on: 1 finding(s), 1 warning(s)" in buf.getvalue()


def test_an_address_below_a_tensor_in_low_memory_is_before_its_start_not_past_its_end():
    """A non-PIE Python (the GPU machine's) keeps small tensors below 4 GiB: base - 4e9 wraps past 2**64, and the
    unsigned compare called it 4611686017427387895 elements past the end."""
    from tritondbg.interp.memory import Buffer

    buf = Buffer(name="y_ptr", data_ptr=4096, itemsize=4, shape=(10,), strides=(1,), dtype="float32", lo=4096,
                 hi=4136, dense=True)
    wrapped = np.array([(4096 - 4_000_000_000) % 2**64, 4136, 4100], dtype=np.uint64)
    assert buf.distance(wrapped).tolist() == [-4_000_000_000, 40, 4]
    assert buf.where(int(wrapped[0])) == "1000000000 element(s) before the start of y_ptr"
    assert buf.where(4136) == "1 element(s) past the end of y_ptr" and buf.where(4100) == "y_ptr[1]"


def test_masked_max_with_defined_padding_is_flagged_only_when_it_changes_the_max():
    from tritondbg.interp.shadow import check_reduce

    x = np.array([[-3.0, -2.0, 0.0, 0.0], [5.0, 1.0, 0.0, 0.0]])
    pad = np.array([[0, 0, 2, 2], [0, 0, 2, 2]], dtype=np.uint8)  # other=0.0 in the last two lanes
    defined, undefined = check_reduce("max", x, pad, 1)
    assert defined[0].tolist() == [False, False, True, True]       # 0 > -2: padding wins the max of row 0
    assert not defined[1].any() and not undefined.any()            # row 1's max is 5 either way
    assert check_reduce("sum", x, pad, 1) is None                  # zeros add nothing
    full = np.array([[2, 2, 2, 2]], dtype=np.uint8)                # a row of padding only: its result is padding
    assert check_reduce("sum", np.ones((1, 4)), full, 1) is None


def test_padding_that_holds_a_nan_computed_from_uninitialized_memory_is_no_masked_reduction():
    """helper-46: NaN computed upstream from memory a buggy kernel left unwritten flowed into Liger's cross entropy,
    whose padding lanes (other=-inf minus that NaN max) then held it: 9 masked_reduction findings in a correct
    kernel. Lanes whose NaN carries an uninit id are skipped (the uninit finding names the cause); a NaN the
    padding makes itself (0 * log(0)) still counts."""
    from tritondbg.interp.shadow import check_reduce

    pad = np.array([[0, 0, 2, 2], [0, 0, 2, 2]], dtype=np.uint8)
    x = np.array([[np.nan, 1.0, np.nan, np.nan], [1.0, 2.0, np.nan, 3.0]])
    skip = np.array([[True, False, True, True], [False, False, False, False]])
    defined, _ = check_reduce("sum", x, pad, 1, skip)
    assert not defined[0].any()                                    # NaN from uninitialized memory: skipped
    assert defined[1].tolist() == [False, False, True, True]       # the padding's own NaN and 3.0 change the sum
    # NaN in the data (Liger's logits from a NaN matmul: no payload left), no op of the kernel made one: a row
    # whose real lanes hold a NaN sums to NaN whatever its padding holds
    defined, _ = check_reduce("sum", x, pad, 1, nan_in_data=True)
    assert not defined[0].any() and defined[1].tolist() == [False, False, True, True]
    assert check_reduce("sum", x, pad, 1)[0][0].tolist() == [False, False, True, True]  # a NaN the kernel made


def test_buffer_knows_views_with_gaps():
    from tritondbg.interp.memory import buffer_of

    base = torch.zeros(4, 6)
    view = base[:, 1:3]                      # 2 of every 6 elements: addresses in between are not elements
    b = buffer_of("v", view)
    assert not b.dense
    addrs = np.array([view.data_ptr(), view.data_ptr() + 4, view.data_ptr() + 8, view.data_ptr() + 24],
                     dtype=np.uint64)
    assert b.contains(addrs, 4).tolist() == [True, True, False, True]
    assert b.where(view.data_ptr() + 24) == "v[1, 0]"
    t = buffer_of("t", torch.zeros(3, 5).t())  # a transpose is dense
    assert t.dense and t.where(t.data_ptr + 4) == "t[1, 0]"  # strides (1, 5): one element down dim 0


@pytest.mark.parametrize("name", ["relu", "where", "max"])
def test_undefined_lanes_laundered_by_an_op_are_still_poison(name):
    """``tl.maximum(x, 0.0)`` / ``tl.where(x > 0, x, 0.0)`` turn the NaN poison into 0, and an int32 label's poison
    (its smallest value) never wins ``tl.max``: the interpreter's values match the reference, the GPU's garbage
    would not. Reported at the load's line; the twin (``other=``) stays clean."""
    path = ZOO / "undefined_lanes.py"
    rec = run(f"{path}::{name}_buggy")
    src = path.read_text().splitlines()
    line = next(i + 1 for i, ln in enumerate(src) if "laundered below" in ln)
    hits = [f for r in rec.results for f in r.findings if f["kind"] == "poison"]
    assert not rec.passed and hits and {f["line"] for f in hits} == {line}, [(f["kind"], f["line"]) for f in hits]
    assert "enter tl." in hits[0]["message"]
    twin = run(f"{path}::{name}_twin")
    assert twin.passed and [f for r in twin.results for f in r.findings] == []


def test_programs_that_all_store_the_same_bits_get_a_warning_not_an_error():
    """Every program setting a flag to 1 is harmless on the GPU, and so is every program storing the same sum of a
    uniform input, which would race on another input: a warning saying both (it said "the result depends on
    program order"), the case passes. Beside it, programs storing their own pid to one element race: one error,
    for that element."""
    data = Path(__file__).resolve().parent / "check_data" / "flag_race.py"
    rec = run(f"{data}::flag")
    (f,) = [f for r in rec.results for f in r.findings]
    assert rec.passed and f["kind"] == "race" and f["severity"] == "warning", f
    assert "each with the same value on this input: harmless if that holds for every input" in f["message"]
    rec = run(f"{data}::flag_and_pid")
    races = [f for f in rec.results[0].findings if f["kind"] == "race"]
    assert not rec.passed and len(races) == 1, rec.results[0].findings
    f = races[0]
    assert f["tensor"] == "flag_ptr" and f["offsets"] == [1] and f["pid"] != f["other_pid"], f
    # the two values, as the programs stored them (helper-112: the size of the difference was never said)
    assert "write different values (0 and 1) to the same element flag_ptr[1]; 1 element(s)" in f["message"], \
        f["message"]
    # helper-74 (a layernorm's wrong stride): values computed from undefined lanes, NaN in every program here, are
    # no "same value": on a GPU they are whatever the lanes held
    rec = run(f"{data}::undefined_values")
    races = [f for f in rec.results[0].findings if f["kind"] == "race"]
    line = next(i + 1 for i, ln in enumerate(data.read_text().splitlines()) if ln.endswith("# RACE_UNDEFINED"))
    assert len(races) == 1 and races[0]["severity"] == "error" and races[0]["line"] == line, rec.results[0].findings


def test_an_overflow_that_leaves_finite_wrong_outputs_is_named_at_its_line(recwarn):
    """An fp16 sum of squares overflows to Inf and rsqrt(inf) = 0 makes the outputs finite and wrong (Liger's
    poly_norm at N = 4097 in fp16): the only clue was numpy's "overflow encountered in cast" at a tritondbg line.
    nan_inf names the tl.sum line; the twin (summed in fp32) is clean; numpy says nothing."""
    path = ZOO / "overflow.py"
    line = next(i + 1 for i, ln in enumerate(path.read_text().splitlines()) if "# fp16: the sum overflows" in ln)
    rec = run(f"{path}::sum_overflow")
    (f,) = [f for r in rec.results for f in r.findings]
    assert not rec.passed and (f["kind"], f["line"]) == ("nan_inf", line), f
    assert "no output is NaN/Inf, but the outputs do not match" in f["message"], f["message"]
    assert not [w for w in recwarn if "overflow encountered" in str(w.message)]
    twin = run(f"{path}::sum_fp32")
    assert twin.passed and [f for r in twin.results for f in r.findings] == []


def test_store_atomic_conflict_leaves_out_a_programs_store_after_its_own_atomic():
    """A store and another program's atomic on one element race, unless the storing program's own atomic on it
    came first (the last ticket's reset); atomics on other elements are no race."""
    from tritondbg.interp import races

    a = lambda *x: np.array(x, dtype=np.uint64)  # noqa: E731
    # writes: (addresses, program, site, bits, seq); atomics: (addresses, program, site, seq, op)
    reset = races.store_atomic_conflict([(a(8), 1, 0, None, 5)], [(a(8), 0, 1, 2, "tl.atomic_add"),
                                                                      (a(8), 1, 1, 4, "tl.atomic_add")])
    assert reset is None
    early = races.store_atomic_conflict([(a(8), 0, 0, None, 1)], [(a(8), 0, 1, 2, "tl.atomic_add"),
                                                                      (a(8), 1, 1, 4, "tl.atomic_add")])
    assert early is not None and (early["pid_a"], early["pid_b"], early["elements"]) == (0, 1, 1)
    assert early["atomic"] == "tl.atomic_add" and early["site_b"] == 1
    apart = races.store_atomic_conflict([(a(8, 16), 0, 0, None, 1)], [(a(24), 1, 1, 2, "tl.atomic_xchg")])
    assert apart is None
    two = races.store_atomic_conflict([(a(16, 8), 0, 0, None, 1)], [(a(8, 16), 1, 1, 2, "tl.atomic_max")])
    assert two["addr"] == 8 and two["elements"] == 2


def test_the_race_reported_is_the_first_to_happen_not_the_lowest_address():
    """Two elements raced: the finding names the pair of stores that raced first in program order. By address,
    it named whichever tensor the allocator placed lower: another pair of lines from one run to the next."""
    from tritondbg.interp import races

    a = lambda *x: np.array(x, dtype=np.uint64)  # noqa: E731
    bits = lambda *x: np.array(x, dtype=np.uint64)  # noqa: E731
    writes = [(a(900), 0, 0, bits(1), 1), (a(100), 0, 1, bits(1), 2),   # program 0: first store 900, then 100
              (a(900), 1, 2, bits(2), 3), (a(100), 1, 3, bits(2), 4)]   # program 1 races 900 first
    race = races.race_conflict(writes)
    assert (race["addr"], race["site_a"], race["site_b"], race["elements"]) == (900, 0, 2, 2)
    writes[2], writes[3] = (a(900), 1, 2, bits(2), 4), (a(100), 1, 3, bits(2), 3)  # now 100 is raced first
    assert races.race_conflict(writes)["addr"] == 100


def test_a_test_and_set_lock_orders_its_stores_and_an_exchanged_flag_does_not():
    """tl.atomic_xchg(lock, 1) == 1 spun on, then tl.atomic_xchg(lock, 0): the stores between are a critical
    section (they were reported as a race: only a tl.atomic_cas took a lock). A word exchanged and never given back
    is a flag: the stores after it still race."""
    data = Path(__file__).resolve().parent / "interp_data" / "xchg_locks.py"
    rec = run(f"{data}::tas_lock")
    assert rec.passed and not rec.results[0].findings, rec.results[0].findings
    rec = run(f"{data}::xchg_flag")
    races = [f for f in rec.results[0].findings if f["kind"] == "race"]
    line = next(i for i, ln in enumerate(data.read_text().splitlines(), 1) if "# MARK: flag_race" in ln)
    assert not rec.passed and len(races) == 1 and races[0]["line"] == line, rec.results[0].findings


LOCKS = '''
import torch, triton, triton.language as tl
from tritondbg import Case, Scenario


@triton.jit
def rows_add(x_ptr, out_ptr, locks_ptr, ROWS: tl.constexpr, WRONG: tl.constexpr):
    pid = tl.program_id(0)
    row = pid % ROWS
    lock = locks_ptr + (pid if WRONG else row)  # one word per row; WRONG: one per program
    while tl.atomic_cas(lock, 0, 1) == 1:
        pass
    o = row * 16 + tl.arange(0, 16)
    tl.store(out_ptr + o, tl.load(out_ptr + o) + tl.load(x_ptr + pid * 16 + tl.arange(0, 16)))  # MARK
    tl.atomic_xchg(lock, 0)


def make(case, dtype, device, generator):
    return dict(x=torch.randn(8, 16, generator=generator).to(device))


def launch(x, wrong):
    out = torch.zeros(2, 16, device=x.device)
    locks = torch.zeros(8, dtype=torch.int32, device=x.device)
    rows_add[(8,)](x, out, locks, ROWS=2, WRONG=wrong)
    return out


def ref(x):
    return x.view(4, 2, 16).sum(0)


right = Scenario("right", make, lambda x: launch(x, False), ref, [Case("c", dtypes=("float32",))], kernels=[rows_add])
wrong = Scenario("wrong", make, lambda x: launch(x, True), ref, [Case("c", dtypes=("float32",))], kernels=[rows_add])
'''


def test_stores_under_different_locks_race_and_under_one_lock_do_not(tmp_path):
    """helper-140: Cut Cross-Entropy's LSE update with its lock index planted wrong (each program a word of its own)
    had no finding: every store made under any lock was taken for ordered. Now the stores to one element must share
    a lock word (Eraser's lockset rule); one word per row stays clean."""
    path = tmp_path / "locks.py"
    path.write_text(LOCKS)
    rec = run(f"{path}::right")
    assert rec.passed and not rec.results[0].findings, rec.results[0].findings
    rec = run(f"{path}::wrong")
    (race,) = rec.results[0].findings
    line = next(i for i, ln in enumerate(LOCKS.splitlines(), 1) if "# MARK" in ln)
    assert race["kind"] == "race" and race["line"] == line and race["severity"] == "error", race
    assert "under different locks (locks_ptr[0] and locks_ptr[2])" in race["message"], race["message"]


@pytest.mark.parametrize("name, neutral", [("max_pad", "float('-inf')"), ("min_pad", "float('inf')")])
def test_masked_max_and_min_are_told_the_padding_that_leaves_them_unchanged(name, neutral):
    """The hint said tl.where(mask, x, 0) for every reduction: for a max over negative data that is the bug."""
    data = Path(__file__).resolve().parent / "interp_data" / "reduction_pads.py"
    rec = run(f"{data}::{name}")
    f = next(f for f in rec.results[0].findings if f["kind"] == "masked_reduction")
    assert f"tl.where(mask, x, {neutral})" in f["message"] and "x, 0)" not in f["message"], f["message"]
    loads = [i for i, ln in enumerate(data.read_text().splitlines(), 1) if "other=0" in ln and "tl.load" in ln]
    assert [ln for ln in loads if f"(filled by the other=0 of the masked load at line {ln})" in f["message"]
            and f"or other={neutral} at line {ln}" in f["message"]], f["message"]


def test_lanes_of_one_store_that_hit_one_element():
    """A program's own lanes writing one element (the race check compared programs only): a histogram's lost
    repeats are a warning at the store, a block stored through one address an error, a scalar broadcast nothing."""
    data = Path(__file__).resolve().parent / "interp_data" / "lane_collisions.py"
    src = data.read_text().splitlines()
    mark = lambda name: next(i for i, ln in enumerate(src, 1) if f"# MARK: {name}" in ln)  # noqa: E731
    hist = [f for f in run(f"{data}::hist").results[0].findings if f["kind"] == "race"]
    assert len(hist) == 1 and hist[0]["severity"] == "warning" and hist[0]["line"] == mark("hist"), hist
    assert "tl.atomic_add" in hist[0]["message"] and "h_ptr[" in hist[0]["message"], hist[0]["message"]
    # the other common cause of equal values from lanes of one store (helper-53, kernl's matmul: offs_m % M)
    assert "offsets wrapped with %" in hist[0]["message"], hist[0]["message"]
    rec = run(f"{data}::scalar")
    scalar = [f for f in rec.results[0].findings if f["kind"] == "race"]
    assert len(scalar) == 1 and scalar[0]["severity"] == "error" and scalar[0]["line"] == mark("scalar"), scalar
    assert "different values" in scalar[0]["message"] and not rec.passed
    rec = run(f"{data}::broadcast")
    assert rec.passed and not rec.results[0].findings, rec.results[0].findings


def test_a_gemm_tiles_wrapped_columns_rounded_apart_by_the_dot_are_a_warning():
    """helper-135: vLLM / lmdeploy's fused_moe wraps ``offs_bn % N`` and masks its store on rows only; the
    interpreter's tl.dot (numpy) rounds a tile's repeated columns 1 ulp apart, so lanes of one store wrote one
    element "with different values": an error (exit 1 on lmdeploy's passing test), and a second warning of two
    stores "in two iterations" of a store that ran once. Now the equal-value warning, saying rounding, alone."""
    data = Path(__file__).resolve().parent / "interp_data" / "lane_collisions.py"
    line = next(i for i, ln in enumerate(data.read_text().splitlines(), 1) if "# MARK: dot" in ln)
    rec = run(f"{data}::wrapdot")
    races = [f for f in rec.results[0].findings if f["kind"] == "race"]
    assert len(races) == 1 and races[0]["severity"] == "warning" and races[0]["line"] == line, races
    # (whether numpy's matmul rounds the repeated columns apart depends on its BLAS build: "but for rounding" then)
    assert "the same value" in races[0]["message"] and "offsets wrapped with %" in races[0]["message"], races
    assert rec.passed, rec.results[0].message
    from tritondbg.interp import races as race_check

    addrs = np.array([8, 16, 8, 24], dtype=np.uint64)
    for vals, rounding in (([0.3525, 1.0, 0.35278, 2.0], True), ([0.3525, 1.0, 0.36, 2.0], False),
                           ([0.0, 1.0, 1e-4, 2.0], False)):
        bits = np.array(vals, dtype=np.float16).view(np.uint16).astype(np.uint64)
        hit = race_check.lane_collisions(addrs, bits, 2)
        assert hit["same_value"] is rounding and hit["rounding"] is rounding, (vals, hit)
    # helper-139 (kernl's fp32 linear layer, tanh after the dot): repeated columns 5-6 epsilons of 1.0 apart
    one = np.float32(1.0)
    for vals, rounding in (([one, 2.0, one - np.float32(6 * 2.0 ** -23), 3.0], True),
                           ([0.39, 2.0, 0.3902, 3.0], False)):
        bits = np.array(vals, dtype=np.float32).view(np.uint32).astype(np.uint64)
        hit = race_check.lane_collisions(addrs, bits, 4)
        assert hit["same_value"] is rounding and hit["rounding"] is rounding, (vals, hit)


def test_lanes_of_a_tile_that_wrap_into_the_next_row_are_named_by_their_place():
    """A 4x8 tile stored without its column mask into rows of 5 (tutorial 08's grouped gemm on a group not a
    multiple of the tile): columns 5..7 of row r land on row r + 1's first elements. The race said "a block stored
    through a scalar pointer ... a scatter with repeated indices"; it names the two lanes that meet and the cause."""
    data = Path(__file__).resolve().parent / "interp_data" / "lane_collisions.py"
    src = data.read_text().splitlines()
    line = next(i for i, ln in enumerate(src, 1) if "# MARK: wrap" in ln)
    rec = run(f"{data}::tile")
    races = [f for f in rec.results[0].findings if f["kind"] == "race"]
    assert len(races) == 1 and races[0]["line"] == line and races[0]["severity"] == "error", races
    msg = races[0]["message"]
    assert "lanes [0, 5] and [1, 0] of one tl.store" in msg and "out_ptr[1, 0]" in msg, msg
    assert "past the end of a row reaches the next row" in msg and "scalar pointer" not in msg, msg
    assert "6 such element(s)" in msg, msg
    rec = run(f"{data}::scalar")
    msg = next(f for f in rec.results[0].findings if f["kind"] == "race")["message"]
    assert "lanes [0] and [1] of one tl.store" in msg and "scalar pointer" in msg, msg


def test_undefined_lanes_that_decide_a_mask_or_an_address_are_reported():
    """x > 0 on poison (NaN) is False, so a store mask made of undefined lanes passed; an index loaded without
    other= (poison: the int's minimum) sent a gather to offset -2**31, blamed on an int32 overflow."""
    data = Path(__file__).resolve().parent / "interp_data" / "poison_sinks.py"
    src = data.read_text().splitlines()
    mark = lambda name: next(i for i, ln in enumerate(src, 1) if f"# MARK: {name}" in ln)  # noqa: E731
    rec = run(f"{data}::mask")
    f = next(f for f in rec.results[0].findings if f["kind"] == "poison")
    assert not rec.passed and f["line"] == mark("mask_load"), rec.results[0].findings
    assert f"the mask of tl.store at line {mark('mask_store')}" in f["message"], f["message"]
    rec = run(f"{data}::mask_twin")
    assert rec.passed and not rec.results[0].findings, rec.results[0].findings
    rec = run(f"{data}::gather")
    found = {f["kind"]: f for f in rec.results[0].findings}
    assert found["poison"]["line"] == mark("idx_load"), found
    assert f"the addresses of tl.load at line {mark('gather')}" in found["poison"]["message"]
    oob = found["out_of_bounds"]["message"]
    assert "computed from lanes a masked load left undefined" in oob and "overflowed" not in oob, oob
    # the next access's own out-of-bounds lanes are not put down to those undefined lanes (a flag left set by the
    # gather said so of the atomic after it)
    rec = run(f"{data}::gather_atomic")
    atomic = next(f for f in rec.results[0].findings if f["kind"] == "out_of_bounds" and f["op"] == "atomic")
    assert atomic["line"] == mark("atomic_oob") and "left undefined" not in atomic["message"], atomic["message"]


def test_cta_scope_atomics_across_programs_race_and_an_atomic_without_mask_says_so():
    data = Path(__file__).resolve().parent / "interp_data" / "atomic_scopes.py"
    src = data.read_text().splitlines()
    mark = lambda name: next(i for i, ln in enumerate(src, 1) if f"# MARK: {name}" in ln)  # noqa: E731
    rec = run(f"{data}::cta")
    races = [f for f in rec.results[0].findings if f["kind"] == "race"]
    assert not rec.passed and len(races) == 1 and races[0]["line"] == mark("cta"), rec.results[0].findings
    assert "scope='cta'" in races[0]["message"] and races[0]["pid"] != races[0]["other_pid"], races[0]["message"]
    rec = run(f"{data}::own")
    assert rec.passed and not rec.results[0].findings, rec.results[0].findings
    rec = run(f"{data}::unmasked")
    f = next(f for f in rec.results[0].findings if f["kind"] == "out_of_bounds")
    assert f["line"] == mark("unmasked") and "The atomic has no mask" in f["message"], f["message"]


LIBDEVICE_SCENARIO = '''
import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice
from tritondbg import Case, Scenario


@triton.jit
def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr, WHAT: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    if WHAT == 0:
        x = tl.load(x_ptr + offs, mask=offs < n)  # UNDEFINED
        e = libdevice.exp(x)
    elif WHAT == 1:
        x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
        e = libdevice.exp(x)
    else:
        x = tl.load(x_ptr + offs, mask=offs < n, other=5.0)
        e = tl.where(offs < n, libdevice.rsqrt(x - 4.0), 0.0)  # NAN (meant: x + 4.0)
    tl.store(out_ptr, tl.sum(e, axis=0))  # SUM


def launch(x, what):
    out = torch.empty(1, device=x.device)
    k[(1,)](x, out, 100, BLOCK=128, WHAT=what)
    return out


def ref(x, what):
    if what == 2:
        return (x + 4.0).rsqrt().sum().reshape(1)
    return x.exp().sum().reshape(1)


def make(case, dtype, device, generator):
    return dict(x=torch.rand(100, generator=generator).to(device), what=case.params["what"])


cases = Scenario("libdevice_bugs", make, launch, ref, kernels=[k],
                 cases=[Case(n, params=dict(what=i), dtypes=("float32",))
                        for i, n in enumerate(("undefined", "padding", "nan"))])
'''


@pytest.mark.parametrize("case, kind, marker", [("undefined", "poison", "UNDEFINED"),
                                                ("padding", "masked_reduction", "SUM"),
                                                ("nan", "nan_inf", "NAN")])
def test_the_sanitizers_follow_a_libdevice_call(tmp_path, case, kind, marker):
    """helper-45: a libdevice op returned a fresh value with no shadow: lanes a load left undefined or padded
    lost their mark through `libdevice.exp` (no poison / masked_reduction finding), and `libdevice.rsqrt` of a
    negative value made the first NaN unseen ("no finding"); the tl.* versions of the same kernels were found."""
    path = tmp_path / "ld_cases.py"
    path.write_text(LIBDEVICE_SCENARIO)
    rec = run(f"{path}::libdevice_bugs", cases=case)
    line = next(i for i, text in enumerate(LIBDEVICE_SCENARIO.splitlines(), 1) if f"# {marker}" in text)
    findings = [(f["kind"], f["line"]) for r in rec.results for f in r.findings]
    assert (kind, line) in findings, findings


TABLE_RACE = '''
import torch
import triton
import triton.language as tl
from tritondbg import Case, Scenario


@triton.jit
def k(ptrs, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    dst = tl.load(ptrs + 1).to(tl.pointer_type(tl.float32))
    offs = tl.arange(0, BLOCK)
    tl.store(dst + offs, offs.to(tl.float32) + pid)  # RACE: every program writes group 1's first elements


def launch(a, b):
    table = torch.tensor([a.data_ptr(), b.data_ptr()], dtype=torch.int64)
    k[(2,)](table, BLOCK=8)
    return b


cases = Scenario("table_race", lambda case, dtype, device, generator: dict(a=torch.zeros(16), b=torch.zeros(16)),
                 launch, lambda a, b: torch.cat([torch.arange(8.0) + 1, torch.zeros(8)]), [Case("tiny")], kernels=[k])
'''


def test_a_race_in_a_tensor_reached_through_a_pointer_table_names_its_entry(tmp_path):
    """helper-45 (Triton's tutorial 08, grouped GEMM): the race was placed "in no argument tensor (558223
    element(s) before the start of group_a_ptrs)"; the out-of-bounds findings of the same run named
    group_c_ptrs[1]. Now the race names the tensor by its table entry too."""
    path = tmp_path / "table_race.py"
    path.write_text(TABLE_RACE)
    rec = run(f"{path}::table_race")
    races = [f for r in rec.results for f in r.findings if f["kind"] == "race"]
    assert races, [(f["kind"], f["message"]) for r in rec.results for f in r.findings]
    assert "ptrs[1][0]" in races[0]["message"] and "no argument tensor" not in races[0]["message"], \
        races[0]["message"]


def test_nan_inf_names_the_op_whose_nan_reached_memory_not_one_a_where_dropped():
    """helper-47: the finding named the first op that made a NaN, a guarded divide whose 0/0 a tl.where drops,
    where the sqrt of a negative made the NaN in the output; and, beside padding a reduction took (the real cause,
    a masked_reduction finding), it named that guarded divide again."""
    data = Path(__file__).resolve().parent / "interp_data" / "where_nan.py"
    src = data.read_text().splitlines()
    mark = lambda name: next(i for i, ln in enumerate(src, 1) if f"# MARK: {name}" in ln)  # noqa: E731
    rec = run(f"{data}::dropped")
    nan = [f for f in rec.results[0].findings if f["kind"] == "nan_inf"]
    assert len(nan) == 1 and nan[0]["line"] == mark("sqrt"), [(f["kind"], f["line"]) for f in rec.results[0].findings]
    assert "sqrt(-0.5) = nan" in nan[0]["message"], nan[0]["message"]
    twin = run(f"{data}::dropped_twin")
    assert twin.passed and twin.results[0].findings == [], twin.results[0].findings
    rec = run(f"{data}::padded")
    kinds = [(f["kind"], f["line"]) for f in rec.results[0].findings]
    assert ("masked_reduction", mark("max")) in kinds and not any(k == "nan_inf" for k, _ in kinds), kinds


def test_lanes_the_guard_keeps_out_fail_a_run_without_sanitizers(tmp_path):
    """helper-48 (torchao's int8 matmul, K even but not a multiple of BLOCK_K): an unmasked tail load read 0
    through the memory guard, the dot came out right and `--no-sanitize` / the correctness gate passed a kernel
    that reads garbage on a GPU. Without sanitizers such lanes now fail the run at their line; with them, the
    sanitizer's finding alone is given."""
    import textwrap

    (tmp_path / "tail.py").write_text(textwrap.dedent('''
        import torch, triton, triton.language as tl
        from tritondbg import Case, Scenario

        @triton.jit
        def rowsum(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
            offs = tl.arange(0, BLOCK)
            x = tl.load(x_ptr + offs)  # MARK: load
            tl.store(y_ptr, tl.sum(x, 0))

        def launch(x):
            y = torch.empty(1, dtype=x.dtype)
            rowsum[(1,)](x, y, x.numel(), BLOCK=64)
            return y

        s = Scenario("s", lambda case, dtype, device, generator: dict(x=torch.randn(50, generator=generator)),
                     launch, lambda x: x.sum().reshape(1), [Case("tiny", dtypes=("float32",))], kernels=[rowsum])
    '''))
    target = str(tmp_path / "tail.py")
    plain = run(target, sanitize_on=False)
    (f,) = plain.results[0].findings
    assert not plain.passed and (f["kind"], f["line"], f["lanes"]) == ("out_of_bounds", 8, 14), f
    assert "the memory guard kept them out" in f["message"], f["message"]
    # the case's one line (what check's correctness gate shows) names where
    assert "kept lanes of a load out of bounds at tail.py:8 (out_of_bounds)" in plain.results[0].message, \
        plain.results[0].message
    checked = run(target)
    kinds = [(f["kind"], f["line"]) for f in checked.results[0].findings]
    assert kinds == [("out_of_bounds", 8)] and "memory guard" not in checked.results[0].findings[0]["message"], kinds


def test_a_product_or_sum_of_two_padded_operands_stays_padding(tmp_path):
    """helper-47 (`--trace` of unsloth's swiglu): `f * g` of two loads padded with 0 gave real lanes (x * 0 is 0
    whatever x holds, so the pad was dropped), and its stats took the 1021 padding lanes as data. Both operands
    padded: a value for an element that does not exist. A tl.max over such a product with negative data takes the
    padding's 0: a masked_reduction it missed."""
    import textwrap

    (tmp_path / "prod.py").write_text(textwrap.dedent('''
        import torch, triton, triton.language as tl
        from tritondbg import Case, Scenario

        @triton.jit
        def maxprod(a_ptr, b_ptr, y_ptr, n, BLOCK: tl.constexpr):
            o = tl.arange(0, BLOCK)
            a = tl.load(a_ptr + o, mask=o < n, other=0.0)
            b = tl.load(b_ptr + o, mask=o < n, other=0.0)
            tl.store(y_ptr, tl.max(a * b, 0))  # MARK: max

        def launch(a, b):
            y = torch.empty(1)
            maxprod[(1,)](a, b, y, a.numel(), BLOCK=16)
            return y

        s = Scenario("s", lambda case, dtype, device, generator: dict(a=torch.full((10,), 2.0),
                     b=-torch.rand(10, generator=generator) - 1), launch, lambda a, b: (a * b).max().reshape(1),
                     [Case("tiny", dtypes=("float32",))], kernels=[maxprod])
    '''))
    rec = run(str(tmp_path / "prod.py"))
    found = [(f["kind"], f["line"]) for f in rec.results[0].findings]
    assert ("masked_reduction", 10) in found and not rec.passed, found


def test_an_fma_over_padding_times_padding_plus_data_is_data():
    """helper-49: tl.fma took the pad of its operands whole, so fma(a_hi, b_hi, a_lo * b_lo) with a padded hi
    half was padding in every lane and unsloth's RMSNorm (correct) got a masked_reduction; today's rule that
    padding times padding stays padding made it fail every run. Padding that holds 1 still counts."""
    data = Path(__file__).resolve().parent / "interp_data" / "fma_pad.py"
    src = data.read_text().splitlines()
    line = next(i for i, ln in enumerate(src, 1) if "# MARK: sum" in ln)
    rec = run(f"{data}::zero")
    assert rec.passed and rec.results[0].findings == [], rec.results[0].findings
    rec = run(f"{data}::one")
    assert ("masked_reduction", line) in [(f["kind"], f["line"]) for f in rec.results[0].findings], \
        rec.results[0].findings


HEADS = '''
import torch, triton, triton.language as tl
from tritondbg import Case, Scenario


@triton.jit
def head_softmax(x_ptr, y_ptr, n_heads, n, SCALE: tl.constexpr, H: tl.constexpr, N: tl.constexpr):
    h, c = tl.arange(0, H), tl.arange(0, N)
    live = (h[:, None] < n_heads) & (c[None, :] < n)
    x = tl.load(x_ptr + h[:, None] * n + c[None, :], mask=live, other=0.0)
    x = tl.where(live, x * SCALE, float("-inf"))  # heads past n_heads: a row of -inf
    m_prev = tl.zeros([H], dtype=tl.float32) - float("inf")  # an online softmax's first step
    m = tl.maximum(tl.max(x, 1), m_prev)
    alpha = tl.exp(m_prev - m)                     # -inf - -inf = NaN in those heads, which are never stored
    p = tl.exp(x - m[:, None])
    l = tl.zeros([H], dtype=tl.float32) * alpha + tl.sum(p, 1)
    tl.store(y_ptr + h[:, None] * n + c[None, :], p / l[:, None], mask=live)


def launch(x, scale):
    y = torch.empty_like(x)
    head_softmax[(1,)](x, y, x.shape[0], x.shape[1], SCALE=scale, H=8, N=16)
    return y


def make(case, dtype, device, generator):
    return dict(x=torch.randn(5, 12, generator=generator), scale=case.params["scale"])


heads = Scenario("heads", make, launch, lambda x, scale: torch.softmax(x, 1), kernels=[head_softmax],
                 cases=[Case("right", params=dict(scale=1.0), dtypes=("float32",)),
                        Case("wrong", params=dict(scale=2.0), dtypes=("float32",))])
'''


def test_a_nan_in_lanes_never_stored_is_not_named_for_a_wrong_output(tmp_path):
    """helper-51 (vLLM's decode attention): the head lanes the kernel masks off make -inf - -inf = NaN in every
    run; with any real bug (a scale twice too large) the outputs were finite and wrong, and nan_inf named that
    subtraction, sending the user to an innocent line. Only an Inf made on the way (an overflow that rsqrt turns
    into 0) explains finite wrong outputs: a NaN stays NaN unless a where or a max drops it."""
    (tmp_path / "heads.py").write_text(HEADS)
    by_case = {r.case: r for r in run(f"{tmp_path / 'heads.py'}::heads", cases="right,wrong").results}
    assert by_case["right"].status == "pass" and by_case["right"].findings == [], by_case["right"].findings
    wrong = by_case["wrong"]
    assert wrong.status == "fail" and wrong.findings == [], wrong.findings


FLASH = Path(__file__).resolve().parent / "interp_data" / "flash_pad.py"


def _mark(path: Path, name: str) -> int:
    return next(i for i, ln in enumerate(path.read_text().splitlines(), 1) if f"# MARK: {name}" in ln)


@pytest.mark.parametrize("scenario", ["additive", "where", "causal"])
def test_a_flash_loop_that_masks_padded_keys_by_adding_minus_inf_is_clean(scenario):
    """helper-58 (SGLang's prefill attention, `qk += tl.where(mask, 0, -inf)`): in the second iteration the
    padded query rows' scores (0) plus that mask row became real (a padded 0 added to data that varies), p's
    padded rows were half real, and `acc += tl.dot(p, v)` took their other half (exactly 0 after the -inf, or
    times v's zero-padded rows) as padding that changes the result. A value the same along an axis is no
    element's own data: the lane stays padding; x + -inf is a fill, as tl.where(mask, qk, -inf) makes it.
    ``causal`` (helper-60, SGLang's causal prefill): the causal and key masks in one 2-D term vary along both axes,
    so the padded query rows became real and `acc += tl.dot(p, v)` was an error on outputs never stored. A term
    made from indices and constants only is no element's own data either."""
    rec = run(f"{FLASH}::{scenario}")
    assert rec.passed and rec.results[0].findings == [], rec.results[0].findings


def test_a_padded_lane_plus_an_index_stays_padding(tmp_path):
    """`x + offs` where x is a zero-padded load: the padded lanes hold their index, a value for an element that does
    not exist, and a sum over them counts it. The index varies along the block (not a value the same along an
    axis), so the lane was taken for real data and the sum passed."""
    import textwrap

    (tmp_path / "idx.py").write_text(textwrap.dedent('''
        import torch, triton, triton.language as tl
        from tritondbg import Case, Scenario

        @triton.jit
        def sum_plus_index(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
            o = tl.arange(0, BLOCK)
            x = tl.load(x_ptr + o, mask=o < n, other=0.0)
            tl.store(y_ptr, tl.sum(x + o.to(tl.float32), 0))  # MARK: sum

        def launch(x):
            y = torch.empty(1)
            sum_plus_index[(1,)](x, y, x.numel(), BLOCK=16)
            return y

        s = Scenario("s", lambda case, dtype, device, generator: dict(x=torch.rand(10, generator=generator)),
                     launch, lambda x: (x + torch.arange(10.0)).sum().reshape(1),
                     [Case("tiny", dtypes=("float32",))], kernels=[sum_plus_index])
    '''))
    rec = run(str(tmp_path / "idx.py"))
    found = [(f["kind"], f["line"]) for f in rec.results[0].findings]
    assert ("masked_reduction", 9) in found and not rec.passed, found


def test_a_sum_that_selects_one_lane_of_a_pair_passes_its_padding_on(tmp_path):
    """helper-64 (TransformerEngine's permutation, the argsort of triton issue 3698): a bitonic compare-and-swap
    picks each pair's left and right lane with `tl.sum(y * (1 - sel), 1)`, and the padded lanes hold a sentinel
    (other=-1) that is sorted on purpose. The sum over (real lane times 0, sentinel) was a masked_reduction whose
    advice (other=0) broke the kernel; it selects the padding and passes it on. A sum that mixes the sentinel into
    data is still reported."""
    import textwrap

    (tmp_path / "pairs.py").write_text(textwrap.dedent('''
        import torch, triton, triton.language as tl
        from tritondbg import Case, Scenario

        @triton.jit
        def pair_max(x_ptr, y_ptr, n, BLOCK: tl.constexpr, MIX: tl.constexpr):
            o = tl.arange(0, BLOCK)
            x = tl.load(x_ptr + o, mask=o < n, other=-1.0)
            y = tl.reshape(x, [BLOCK // 2, 2])
            sel = tl.arange(0, 2)[None, :]
            left = tl.sum(y * (1 - sel), 1)
            right = tl.sum(y * sel, 1)  # MARK: right
            if MIX:
                right = tl.sum(y, 1) - left  # MARK: mix
            h = tl.arange(0, BLOCK // 2)
            tl.store(y_ptr + h, tl.maximum(left, right), mask=h * 2 < n)

        def launch(x, mix):
            y = torch.empty((x.numel() + 1) // 2)
            pair_max[(1,)](x, y, x.numel(), BLOCK=16, MIX=mix)
            return y

        def reference(x, mix):
            return torch.nn.functional.pad(x, (0, x.numel() % 2), value=-1.0).reshape(-1, 2).amax(1)

        s = Scenario("s", lambda case, dtype, device, generator: dict(x=torch.rand(9, generator=generator),
                     mix=case.params["mix"]), launch, reference,
                     [Case("select", params=dict(mix=False), dtypes=("float32",)),
                      Case("mix", params=dict(mix=True), dtypes=("float32",))], kernels=[pair_max])
    '''))
    by_case = {r.case: r for r in run(str(tmp_path / "pairs.py"), cases="select,mix").results}
    assert by_case["select"].status == "pass" and by_case["select"].findings == [], by_case["select"].findings
    src = (tmp_path / "pairs.py").read_text().splitlines()
    mix_line = next(i for i, ln in enumerate(src, 1) if "# MARK: mix" in ln)
    found = [(f["kind"], f["line"]) for f in by_case["mix"].findings]
    assert ("masked_reduction", mix_line) in found, found


def test_padded_keys_left_in_a_flash_softmax_are_reported_at_the_sum():
    """The same loop without the key mask: the padded keys' scores are 0 (other=0.0), exp(0 - m) is not, and the
    softmax's sum counts keys that do not exist (0 - m[:, None] was taken for data: m is not uniform)."""
    rec = run(f"{FLASH}::unmasked")
    found = [(f["kind"], f["line"]) for f in rec.results[0].findings]
    assert ("masked_reduction", _mark(FLASH, "sum")) in found and not rec.passed, found
    # the loads whose other= filled the padding, and what it became (helper-132: "other=0 when the loaded value is
    # reduced as it is" for an other=0.0 that an exp had turned into exp(0 - m))
    f = next(f for f in rec.results[0].findings if f["kind"] == "masked_reduction")
    src = FLASH.read_text().splitlines()
    q, k = (next(i for i, ln in enumerate(src, 1) if ln.strip().startswith(f"{v} = tl.load")) for v in "qk")
    assert f"(filled by the other= of the masked loads at lines {q}, {k})" in f["message"], f["message"]
    assert "pad with other=0, which the ops between turn into " in f["message"], f["message"]
    assert "x = tl.where(mask, x, float('-inf')) before an exp" in f["message"], f["message"]


def test_a_dot_finding_names_the_operand_that_holds_the_padding():
    """A dot over padding that an op made nonzero (exp(0) = 1) after a load with other=0.0: the message named
    neither operand and said 'or other=0 when the loaded value is reduced as it is', which it already was."""
    rec = run(f"{FLASH}::expdot")
    f = next(f for f in rec.results[0].findings if f["kind"] == "masked_reduction")
    assert f["line"] == _mark(FLASH, "expdot"), f
    assert "of its first operand" in f["message"] and "holds 1" in f["message"], f["message"]
    assert "other=0 when" not in f["message"], f["message"]


SCALAR_OTHER = '''
import torch, triton, triton.language as tl
from tritondbg import Case, Scenario


@triton.jit
def prev_of(seq_ptr, out_ptr, OTHER: tl.constexpr):
    pid = tl.program_id(0)
    if OTHER:
        prev = tl.load(seq_ptr + pid, mask=pid >= 1, other=0)  # mamba's seq_idx_prev
    else:
        prev = tl.load(seq_ptr + pid, mask=pid >= 1)  # LOAD
    tl.store(out_ptr + pid, prev)


def make_inputs(case, dtype, device, generator):
    return dict(seq=torch.tensor([5, 6, 7], dtype=dtype, device=device))


def launch(seq, other=True):
    out = torch.full((3,), 77, dtype=seq.dtype, device=seq.device)
    prev_of[(3,)](seq, out, OTHER=other)
    return out


def reference(seq):
    return torch.tensor([0, 6, 7], dtype=seq.dtype)


s = Scenario(name="prev", make_inputs=make_inputs, launch=lambda seq: launch(seq), reference=reference,
             kernels=[prev_of], cases=[Case("tiny", params={}, dtypes=("int32", "float32"))])
without = Scenario(name="without", make_inputs=make_inputs, launch=lambda seq: launch(seq, False),
                   reference=reference, kernels=[prev_of], cases=[Case("tiny", params={}, dtypes=("float32",))])
wrong = Scenario(name="wrong", make_inputs=make_inputs, launch=lambda seq: launch(seq, False),
                 reference=lambda seq: torch.tensor([0, 6, 8], dtype=seq.dtype), kernels=[prev_of],
                 cases=[Case("tiny", params={}, dtypes=("float32",))])
'''


def test_a_scalar_loads_other_zero_is_honoured(tmp_path):
    """helper-68: Triton's frontend passes ``other.handle if other else None``, and the interpreter's bool() of a
    one-element tensor is its value: a scalar load's ``other=0`` arrived as none, the sanitizers poisoned the lane
    and a correct kernel (mamba's seq_idx_prev) failed with "got -2.14748e+09, expected 0". The load without
    ``other=`` still leaves its lane undefined."""
    path = tmp_path / "scalar_other.py"
    path.write_text(SCALAR_OTHER)
    rec = run(f"{path}::prev")
    assert rec.passed, [(r.message, r.findings) for r in rec.results]
    rec = run(f"{path}::without")
    assert not rec.passed
    line = next(i for i, ln in enumerate(SCALAR_OTHER.splitlines(), 1) if "# LOAD" in ln)
    assert any(f["kind"] == "poison" and f["line"] == line for r in rec.results for f in r.findings), \
        [(r.message, r.findings) for r in rec.results]


def test_a_mismatch_the_poison_alone_makes_says_so_from_a_run_without_it(tmp_path):
    """helper-70: a replay of scattermoe's kernel (loads without other=) said "5328/5328 mismatched, got nan",
    read as a kernel wrong everywhere. The case is run again without the sanitizers (undefined lanes read as 0,
    as today's compiled code reads them): the record and the console say whether the outputs then match."""
    from tritondbg.render.console import print_case
    from rich.console import Console

    path = tmp_path / "scalar_other.py"
    path.write_text(SCALAR_OTHER)
    (r,) = run(f"{path}::without").results
    assert r.status == "fail" and r.extra["undefined_as_zero"] == {"out": {"passed": True, "mismatched": 0,
                                                                            "numel": 3}}, r.extra
    con = Console(record=True, width=300)
    print_case(con, r)
    assert "every output matches the reference: the mismatch is the NaN in the lanes" in con.export_text()
    assert "past a tensor's end" not in con.export_text()
    # helper-94: an unmasked load past a tensor's end (SageAttention's causal k_scale) is no "undefined lane"
    r.findings = [*r.findings, dict(kind="out_of_bounds", severity="error", op="load", file=str(path), line=1,
                                    pid=[0, 0, 0], tensor="x", offsets=[5], message="load past the end")]
    con = Console(record=True, width=300)
    print_case(con, r)
    assert "undefined lanes and reads past a tensor's end as 0" in con.export_text(), con.export_text()
    (r,) = run(f"{path}::wrong").results  # wrong beyond the poison: said so
    assert r.extra["undefined_as_zero"]["out"]["passed"] is False
    con = Console(record=True, width=300)
    print_case(con, r)
    assert "still wrong: out 1/3 mismatched" in con.export_text()


def test_undefined_lanes_that_enter_a_max_get_the_advice_of_minus_inf(tmp_path):
    """helper-70: a softmax whose load lost its other= was told "other=0.0 keeps today's result": true, and wrong
    advice (0 can be the max of a row of negatives: wrong on today's GPUs too, as the run without the sanitizers
    shows). Lanes that enter a max are told other=float('-inf')."""
    path = tmp_path / "smx.py"
    path.write_text('''
import torch, triton, triton.language as tl
from tritondbg import Case, Scenario


@triton.jit
def softmax_rows(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n + cols, mask=cols < n)
    m = tl.max(x, 0)
    e = tl.exp(x - m)
    tl.store(y_ptr + row * n + cols, e / tl.sum(e, 0), mask=cols < n)


def launch(x):
    y = torch.empty_like(x)
    softmax_rows[(4,)](x, y, 100, BLOCK=128)
    return y


s = Scenario(name="smx", make_inputs=lambda case, dtype, device, generator: dict(
                 x=torch.randn(4, 100, generator=generator).to(device) - 3),
             launch=launch, reference=lambda x: torch.softmax(x, -1), kernels=[softmax_rows],
             cases=[Case("tiny", params={}, dtypes=("float32",))])
''')
    (r,) = run(str(path)).results
    (f,) = [f for f in r.findings if f["kind"] == "poison"]
    assert "other=float('-inf') for the max it enters" in f["message"] and "keeps today's" not in f["message"], f
    assert r.extra["undefined_as_zero"]["out"]["passed"] is False  # wrong with 0 there too


def test_undefined_lanes_that_enter_a_max_of_absolute_values_get_the_advice_of_zero(tmp_path):
    """helper-94: SageAttention's per-block int8 quantisation, ``scale = tl.max(tl.abs(x))`` over a load without
    other=, was told other=float('-inf'), which the abs turns into +inf (an inf scale, every output NaN), and that
    today's 0 "can be the max itself". Where every real lane the max reduces is >= 0, 0 never wins: other=0.0."""
    path = tmp_path / "absmax.py"
    path.write_text('''
import torch, triton, triton.language as tl
from tritondbg import Case, Scenario


@triton.jit
def quant_rows(x_ptr, q_ptr, s_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n + cols, mask=cols < n)
    scale = tl.max(tl.abs(x), 0) / 127.0
    tl.store(q_ptr + row * n + cols, x / scale, mask=cols < n)
    tl.store(s_ptr + row, scale)


def launch(x):
    q, s = torch.empty_like(x), torch.empty(x.shape[0], device=x.device)
    quant_rows[(4,)](x, q, s, 100, BLOCK=128)
    return q, s


def reference(x):
    s = x.abs().amax(-1) / 127.0
    return x / s[:, None], s


s = Scenario(name="absmax", make_inputs=lambda case, dtype, device, generator: dict(
                 x=torch.randn(4, 100, generator=generator).to(device)),
             launch=launch, reference=reference, kernels=[quant_rows],
             cases=[Case("tiny", params={}, dtypes=("float32",))])
''')
    (r,) = run(str(path)).results
    (f,) = [f for f in r.findings if f["kind"] == "poison"]
    assert "other=0.0 keeps today's result: the real lanes the max reduces are all >= 0" in f["message"], f
    assert "float('-inf') for the max it enters" not in f["message"], f


def test_a_max_over_a_few_real_lanes_does_not_claim_they_are_never_negative(tmp_path):
    """helper-142: ColossalAI's softmax with other=-inf dropped, on a 1x1 input: its one real lane happened to be >= 0,
    and the advice said other=0.0 keeps the result "after an abs, a square or an exp", where the exp(0 - max) of the
    padding then entered the sum (the program's own check failed by 0.24). Under 8 real lanes nothing is claimed."""
    path = tmp_path / "smx.py"
    path.write_text('''
import torch, triton, triton.language as tl
from tritondbg import Case, Scenario


@triton.jit
def softmax_rows(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + cols, mask=cols < n)
    e = tl.exp(x - tl.max(x, 0))
    tl.store(y_ptr + cols, e / tl.sum(e, 0), mask=cols < n)


def launch(x):
    y = torch.empty_like(x)
    softmax_rows[(1,)](x, y, x.numel(), BLOCK=2)
    return y


s = Scenario(name="one", make_inputs=lambda case, dtype, device, generator: dict(x=torch.tensor([0.5]).to(device)),
             launch=launch, reference=lambda x: torch.softmax(x, -1), kernels=[softmax_rows],
             cases=[Case("tiny", params={}, dtypes=("float32",))])
''')
    (r,) = run(str(path)).results
    (f,) = [f for f in r.findings if f["kind"] == "poison"]
    assert "the real lanes the max reduces are all >= 0" not in f["message"], f
    assert "float('-inf') for the max it enters" in f["message"], f


def test_undefined_lanes_that_enter_a_sum_and_then_a_max_get_the_advice_of_zero_for_the_sum(tmp_path):
    """helper-106: lmdeploy's rms_norm_quant loads x without other=, sums its squares, then takes
    ``tl.max(tl.abs(out))``; the sum's NaN reached every lane of the max, so whether its real lanes are >= 0 could
    not be read, and the advice was other=float('-inf'), which the sum of squares makes inf."""
    path = tmp_path / "rmsq.py"
    path.write_text('''
import torch, triton, triton.language as tl
from tritondbg import Case, Scenario


@triton.jit
def rms_quant(x_ptr, q_ptr, s_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n + cols, mask=cols < n)
    out = x * tl.rsqrt(tl.sum(x * x, 0) / n + 1e-6)
    scale = tl.max(tl.abs(out), 0) / 127.0
    tl.store(q_ptr + row * n + cols, out / scale, mask=cols < n)
    tl.store(s_ptr + row, scale)


def launch(x):
    q, s = torch.empty_like(x), torch.empty(x.shape[0], device=x.device)
    rms_quant[(4,)](x, q, s, 100, BLOCK=128)
    return q, s


def reference(x):
    out = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)
    s = out.abs().amax(-1) / 127.0
    return out / s[:, None], s


s = Scenario(name="rmsq", make_inputs=lambda case, dtype, device, generator: dict(
                 x=torch.randn(4, 100, generator=generator).to(device)),
             launch=launch, reference=reference, kernels=[rms_quant],
             cases=[Case("tiny", params={}, dtypes=("float32",))])
''')
    (r,) = run(str(path)).results
    (f,) = [f for f in r.findings if f["kind"] == "poison"]
    assert "they enter tl.sum at line" in f["message"] and "tl.max at line" in f["message"], f
    assert "other=0.0 keeps today's result and suits the sum it enters" in f["message"], f
    assert "float('-inf') for the max it enters" not in f["message"], f


SENTINEL = '''
import torch, triton, triton.language as tl
from tritondbg import Case, Scenario


@triton.jit
def expert_span(idx_ptr, out_ptr, n, E, FLOAT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if FLOAT:  # the same with floats: an error
        e = tl.load(idx_ptr + offs, mask=offs < n, other=E).to(tl.float32)
    else:
        e = tl.load(idx_ptr + offs, mask=offs < n, other=E)
    last = tl.minimum(tl.max(e, 0), E - 1)  # MAX
    first = tl.min(e, 0)
    tl.store(out_ptr + tl.program_id(0) * 2, first)
    tl.store(out_ptr + tl.program_id(0) * 2 + 1, last)


def launch(idx, flt=False):
    out = torch.empty(4, dtype=torch.float32 if flt else torch.int32)
    expert_span[(2,)](idx, out, 100, 8, FLOAT=flt, BLOCK=64)
    return out


def reference(idx, flt=False):
    a, b = idx[:64], idx[64:100]
    return torch.tensor([a.min(), a.max(), b.min(), 7], dtype=torch.float32 if flt else torch.int32)


def make_inputs(case, dtype, device, generator):
    return dict(idx=torch.sort(torch.randint(0, 5, (100,), generator=generator, dtype=torch.int32))[0])


ints = Scenario(name="ints", make_inputs=make_inputs, launch=launch, reference=reference, kernels=[expert_span],
                cases=[Case("tiny", params={}, dtypes=("int32",))])
floats = Scenario(name="floats", make_inputs=make_inputs, launch=lambda idx: launch(idx, True),
                  reference=lambda idx: reference(idx, True), kernels=[expert_span],
                  cases=[Case("tiny", params={}, dtypes=("int32",))])
'''


def test_an_integer_max_over_a_sentinel_the_code_clamps_is_a_warning(tmp_path):
    """helper-70: scattermoe's `tl.minimum(tl.max(E_idxs), E - 1)` over a load with other=E (the number of
    experts: a sentinel, clamped, then the bound of a masked loop) failed every run as a masked_reduction error.
    Over integers a max / min that takes its padding is a warning saying when that is harmless; over floats it
    stays an error."""
    path = tmp_path / "sentinel.py"
    path.write_text(SENTINEL)
    line = next(i for i, ln in enumerate(SENTINEL.splitlines(), 1) if "# MAX" in ln)
    rec = run(f"{path}::ints")
    assert rec.passed, [(r.message, r.findings) for r in rec.results]
    (f,) = [f for r in rec.results for f in r.findings if f["kind"] == "masked_reduction"]
    assert f["severity"] == "warning" and f["line"] == line and "A sentinel that the code clamps" in f["message"], f
    rec = run(f"{path}::floats")
    assert not rec.passed
    assert any(f["kind"] == "masked_reduction" and f["severity"] == "error" and f["line"] == line
               for r in rec.results for f in r.findings), [(r.message, r.findings) for r in rec.results]


def _block_pointers() -> bool:
    """Triton <= 3.8 (3.9 removed block pointers in favour of tensor descriptors; 3.8 lowers them in Python)."""
    import triton.language as tl
    from triton.runtime import interpreter

    return hasattr(interpreter.InterpreterBuilder, "create_tensor_pointer_load") or hasattr(tl.core, "_block_ptr")


@pytest.mark.skipif(not _block_pointers(), reason="this Triton has no block pointers (3.9+)")
def test_a_block_pointer_load_without_padding_is_told_padding_option_not_other(tmp_path):
    """helper-72: mlstm's `tl.load(block_ptr, boundary_check=(0, 1))` was told "mask without other= ... give the load
    other=": the line has no mask, and other= on a block-pointer load raises. It says padding_option="zero". A
    dimension left out of boundary_check= was "in no argument tensor ... Its mask lets them through"."""
    path = tmp_path / "bp.py"
    path.write_text(BLOCK_PTR)
    (r,) = run(f"{path}::nopad").results
    (f,) = [f for f in r.findings if f["kind"] == "poison"]
    assert 'padding_option="zero"' in f["message"] and "mask without other=" not in f["message"], f
    assert run(f"{path}::pad").passed
    # a dimension boundary_check= leaves out: named against the block's tensor, in block-pointer terms
    (r,) = run(f"{path}::unchecked").results
    (f,) = [f for f in r.findings if f["kind"] == "out_of_bounds"]
    assert "outside x_ptr (float32[20, 48])" in f["message"], f["message"]
    assert "boundary_check= does not cover the dimension" in f["message"] and "Its mask" not in f["message"], f


BLOCK_PTR = '''
import torch, triton, triton.language as tl
from tritondbg import Case, Scenario


@triton.jit
def bp_sum(x_ptr, y_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr, PAD: tl.constexpr):
    pid = tl.program_id(0)
    p = tl.make_block_ptr(x_ptr, (M, N), (N, 1), (pid * BM, 0), (BM, BN), (1, 0))
    if PAD == 2:  # rows past the end unchecked
        x = tl.load(p, boundary_check=(1,), padding_option="zero")
    elif PAD:
        x = tl.load(p, boundary_check=(0, 1), padding_option="zero")
    else:
        x = tl.load(p, boundary_check=(0, 1))
    tl.store(y_ptr + pid * BM + tl.arange(0, BM), tl.sum(x, 1), mask=pid * BM + tl.arange(0, BM) < M)


def launch(x, pad=False):
    y = torch.empty(x.shape[0])
    bp_sum[(triton.cdiv(x.shape[0], 16),)](x, y, x.shape[0], x.shape[1], BM=16, BN=64, PAD=pad)
    return y


mk = lambda case, dtype, device, generator: dict(x=torch.randn(20, 48, generator=generator).to(device))  # noqa: E731
nopad = Scenario(name="nopad", make_inputs=mk, launch=launch, reference=lambda x: x.sum(1), kernels=[bp_sum],
                 cases=[Case("tiny", params={}, dtypes=("float32",))])
pad = Scenario(name="pad", make_inputs=mk, launch=lambda x: launch(x, True), reference=lambda x: x.sum(1),
               kernels=[bp_sum], cases=[Case("tiny", params={}, dtypes=("float32",))])
unchecked = Scenario(name="unchecked", make_inputs=mk, launch=lambda x: launch(x, 2), reference=lambda x: x.sum(1),
                     kernels=[bp_sum], cases=[Case("tiny", params={}, dtypes=("float32",))])
'''


def test_a_strided_view_read_as_if_contiguous_names_the_stride(tmp_path):
    """helper-70: lightllm's rmsnorm loads `X + cols` and ignores x_stride1; on `base[:, ::2]` the finding said "A
    mask missing or off by one". A view with elements of its storage between its own says the stride first."""
    path = tmp_path / "strided.py"
    path.write_text(STRIDED)
    (r,) = run(str(path)).results
    (f,) = [f for f in r.findings if f["kind"] == "outside_view"]
    assert f["severity"] == "error" and "A stride the kernel does not apply (the view's strides are (96, 2)" \
        in f["message"], f


STRIDED = '''
import torch, triton, triton.language as tl
from tritondbg import Case, Scenario


@triton.jit
def row_scale(x_ptr, y_ptr, stride_xm, stride_xn, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride_xm + cols, mask=cols < n)  # ignores stride_xn
    tl.store(y_ptr + row * n + cols, x * 2, mask=cols < n)


def launch(x):
    v = x[:, ::2]
    y = torch.empty(v.shape)
    row_scale[(v.shape[0],)](v, y, v.stride(0), v.stride(1), v.shape[1], BLOCK=64)
    return y


s = Scenario(name="strided", make_inputs=lambda case, dtype, device, generator: dict(
                 x=torch.randn(4, 96, generator=generator).to(device)),
             launch=launch, reference=lambda x: x[:, ::2] * 2, kernels=[row_scale],
             cases=[Case("tiny", params={}, dtypes=("float32",))])
'''


def test_out_of_bounds_lanes_that_hold_other_are_no_padding_of_a_reduction(tmp_path):
    """helper-72: lanes only the sanitizer masked off (out of bounds) hold the load's other=, and a reduction over
    them was a second finding, masked_reduction "padding lanes (filled by a masked load's other=)": a follow-on
    of the out_of_bounds finding, which alone is told."""
    path = tmp_path / "oobsum.py"
    path.write_text(OOB_SUM)
    (r,) = run(str(path)).results
    assert sorted(f["kind"] for f in r.findings) == ["out_of_bounds"], [(f["kind"], f["line"]) for f in r.findings]


OOB_SUM = '''
import torch, triton, triton.language as tl
from tritondbg import Case, Scenario


@triton.jit
def row_sum(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n + cols, mask=cols < BLOCK, other=1.0)  # a mask that masks nothing
    tl.store(y_ptr + row, tl.sum(x, 0))


def launch(x):
    y = torch.empty(x.shape[0])
    row_sum[(x.shape[0],)](x, y, x.shape[1], BLOCK=64)
    return y


s = Scenario(name="oobsum", make_inputs=lambda case, dtype, device, generator: dict(
                 x=torch.randn(3, 50, generator=generator).to(device)),
             launch=launch, reference=lambda x: x.sum(1), kernels=[row_sum],
             cases=[Case("tiny", params={}, dtypes=("float32",))])
'''


SLICES = '''
import torch, triton, triton.language as tl
from tritondbg import Case, Scenario


@triton.jit
def pick(w_ptr, idx_ptr, out_ptr, stride_l, N: tl.constexpr):
    i = tl.program_id(0)
    lora = tl.load(idx_ptr + i)
    offs = tl.arange(0, N)
    tl.store(out_ptr + i * N + offs, tl.load(w_ptr + lora * stride_l + offs))


def launch(w, idx):
    out = torch.empty(idx.numel(), w[0].numel())
    pick[(idx.numel(),)](w[0], idx, out, w.stride(0), N=w[0].numel())
    return out


def mk(rows):
    return lambda case, dtype, device, generator: dict(
        w=torch.randn(3, *rows, generator=generator).to(device),
        idx=torch.tensor([2, 0, 1], dtype=torch.int32, device=device))


whole = Scenario(name="whole", make_inputs=mk((4, 16)), launch=launch,
                 reference=lambda w, idx: w[idx.long()].reshape(3, -1), kernels=[pick],
                 cases=[Case("tiny", params={}, dtypes=("float32",))])
rows = Scenario(name="rows", make_inputs=mk((64,)), launch=launch,  # 1-D slices (x[0] of rows): still an error
                reference=lambda w, idx: w[idx.long()], kernels=[pick],
                cases=[Case("tiny", params={}, dtypes=("float32",))])
'''


def test_a_slice_whose_storage_is_whole_slices_reached_by_a_handed_stride_is_a_warning(tmp_path):
    """helper-69: vLLM's LoRA expand is handed `lora_b_weight[0]` and the whole weight's stride(0), and reaches the
    other LoRAs by it: correct on a GPU, an outside_view error that failed the run. With the slice's size among
    the launch's integers it is a warning saying so."""
    path = tmp_path / "slices.py"
    path.write_text(SLICES)
    rec = run(f"{path}::whole")
    assert rec.passed, [(r.message, r.findings) for r in rec.results]
    (f,) = [f for r in rec.results for f in r.findings if f["kind"] == "outside_view"]
    assert f["severity"] == "warning" and "handed 64 as stride_l" in f["message"], f
    rec = run(f"{path}::rows")  # a row of a matrix handed its length: the off-by-one past it is not excused
    assert any(f["kind"] == "outside_view" and f["severity"] == "error" for r in rec.results for f in r.findings)


def test_out_of_bounds_lanes_a_wide_mask_lets_through_are_no_lanes_the_mask_leaves_undefined():
    """helper-75 (megablocks' padded_gather with `offsets <= NUM_COLUMNS`): beside the out_of_bounds error, a poison
    finding said the load's mask leaves lanes undefined and advised other=, for the out-of-bounds lane's value. Those
    lanes get an id of their own, told by the out_of_bounds finding alone."""
    data = Path(__file__).resolve().parent / "interp_data" / "le_mask.py"
    rec = run(f"{data}::le_mask")
    line = next(i for i, ln in enumerate(data.read_text().splitlines(), 1) if "# MARK: oob" in ln)
    kinds = {(f["kind"], f["line"]) for f in rec.results[0].findings}
    assert ("out_of_bounds", line) in kinds and not any(k == "poison" for k, _ in kinds), kinds


def test_a_select_that_keeps_a_lanes_own_data_over_padding_is_no_padding():
    """helper-77 (FlagGems' argmax): `acc = tl.where(x > acc, x, acc)` over `other=-inf` was a masked_reduction at
    the max: the condition was computed from padding, so the lane counted as padding though it holds acc's data.
    A select keeping data there is data; one putting a constant there (`tl.where(x > 0, x, 1.0)`) is padding."""
    data = Path(__file__).resolve().parent / "interp_data" / "where_pads.py"
    rec = run(f"{data}::kept")
    assert rec.passed and not rec.results[0].findings, rec.results[0].findings
    rec = run(f"{data}::ones")
    line = next(i for i, ln in enumerate(data.read_text().splitlines(), 1) if "# MARK: ones" in ln)
    assert [(f["kind"], f["line"]) for f in rec.results[0].findings] == [("masked_reduction", line)], \
        rec.results[0].findings
