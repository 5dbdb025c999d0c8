"""`python -m tritondbg.check.dump TARGET OUT.pt SEED`: run every interpretable case under the interpreter and
save the outputs (for the agreement gate, which compares them with the GPU's in another process)."""
import sys

from tritondbg import loader, runner


def main(target: str, out: str, seed: int) -> int:
    import torch

    from tritondbg.check.gates import Capture

    runner.set_mode("interpret")
    scenario = loader.load(target)
    saved = {}
    for case in scenario.cases:
        if not case.interpret:
            continue
        for dtype in case.dtypes:
            cap = Capture()
            runner.run_case(scenario, case, dtype, device="cpu", seed=seed, instruments=[cap])
            if cap.outputs:
                saved[f"{case.name}/{dtype}"] = cap.outputs[0]
    torch.save(saved, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
