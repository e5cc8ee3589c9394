"""Helpers shared by the notebooks: find the built `trainsim`, run it, read its output.

The binary is $TRAINSIM_EXE (the CTest tests set it) or build/trainsim in the repository."""

import io
import json
import os
import subprocess
import tempfile

import pandas as pd

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def exe():
    path = os.environ.get("TRAINSIM_EXE") or os.path.join(REPO, "build", "trainsim")
    if not os.access(path, os.X_OK):
        raise FileNotFoundError(f"trainsim binary not found at {path}: build it or set TRAINSIM_EXE")
    return path


def run(*args):
    """Runs trainsim with `args`; raises with its stderr when it fails."""
    r = subprocess.run([exe(), *map(str, args)], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"trainsim {' '.join(map(str, args))} exited {r.returncode}:\n{r.stderr}")
    return r.stdout


def run_json(*args):
    return json.loads(run(*args, "--format", "json"))


def sweep(*args):
    """`trainsim sweep ... --format csv` as a DataFrame (columns vary.PATH + simulate fields)."""
    return pd.read_csv(io.StringIO(run("sweep", *args, "--format", "csv")))


# The notebook's scenario files live in one directory, removed when the kernel exits.
_SCENARIO_DIR = tempfile.TemporaryDirectory(prefix="trainsim_nb_")


def write_scenario(doc, name="scenario.json"):
    """Writes a scenario dict to a temporary file and returns its path."""
    d = tempfile.mkdtemp(dir=_SCENARIO_DIR.name)
    path = os.path.join(d, name)
    with open(path, "w") as f:
        json.dump(doc, f)
    return path
