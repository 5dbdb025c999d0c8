"""Click options shared by several commands, defined once (pip-tools' scripts/options.py habit)."""
import click

case = click.option("--case", "case", metavar="NAME", default=None,
                    help="Case of the scenario (default: tiny); 'all' for every case that can run.")
dtype = click.option("--dtype", metavar="DTYPE", default=None,
                     help="Run one dtype of the case (default: every dtype it lists).")
config = click.option("--config", "config", metavar="K=V,...", default=None,
                      help="Autotune config to pin, e.g. BLOCK_M=64,num_warps=4 (must match a listed config).")
seed = click.option("--seed", type=int, default=0, show_default=True, help="Seed of the inputs.")
as_json = click.option("--json", "as_json", is_flag=True, help="Print the run record as JSON.")
out = click.option("--out", "out_dir", metavar="DIR", default=None,
                   help="Folder for run records [default: $TRITONDBG_OUT or ./traces].")
