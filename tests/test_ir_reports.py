"""`tritondbg ir` reporting what went wrong (helper-131): --json on a failed compile, an error in the scenario's own
code, Ctrl-C during --all-configs, several cases, the program form it does not have, shared-memory limits."""
import json
from pathlib import Path

from tritondbg.ir.item import IRItem


def _item(tmp_path: Path, target: dict, shared: int) -> IRItem:
    meta = tmp_path / "k.json"
    meta.write_text(json.dumps({"target": target, "shared": shared, "num_warps": 4, "num_stages": 2}))
    return IRItem(scenario="s", case="tiny", dtype="float32", arch=str(target["arch"]), arch_source="--arch",
                  kernel="k", kernel_file="k.py", config={}, config_source="", grid=[1, 1, 1], specialization=[],
                  entry=str(tmp_path), files={}, metadata_file=str(meta), name="k")


def test_shared_memory_limit_of_rdna_volta_and_turing(tmp_path):
    """helper-131: gfx1100 / gfx1200 (64 KiB of LDS per workgroup, as Triton's AMD backend counts), sm_70 (96 KiB)
    and sm_75 (64 KiB) had no limit, so a kernel over it was never flagged."""
    from tritondbg.ir.stats import compute

    for target, limit in [({"backend": "hip", "arch": "gfx1100", "warp_size": 32}, 65536),
                          ({"backend": "hip", "arch": "gfx1200", "warp_size": 32}, 65536),
                          ({"backend": "hip", "arch": "gfx950", "warp_size": 64}, 163840)]:
        out = compute(_item(tmp_path, target, 70000), mix=False)
        assert out["shared_limit"] == limit and out["shared_fits"] is (70000 <= limit), (target, out)
    from tritondbg.ir.stats import shared_limit

    assert shared_limit(70) == 98304 and shared_limit(75) == 65536 and shared_limit(90) == 232448
