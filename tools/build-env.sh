#!/usr/bin/env bash
# Build (or reuse) the course's virtual environment from one locked set.
#   tools/build-env.sh PYTHON VENV SET
# Re-running is instant when the stamp is newer than the lock. Switching sets
# (cpu -> cu13, say) rebuilds from scratch so two CuPy builds never mix.
set -euo pipefail
py=$1 venv=$2 set=$3
lock=requirements/$set.lock
stamp=$venv/.installed-$set

"$py" - <<'PY' || { echo "The course needs Python 3.11 or newer: set PYTHON=python3.11 (or newer) and run make again." >&2; exit 1; }
import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)
PY

if [ -f "$stamp" ] && [ "$stamp" -nt "$lock" ] && [ "$stamp" -nt requirements/pycuda.lock ]; then
  exit 0
fi
if [ -d "$venv" ] && ls "$venv"/.installed-* >/dev/null 2>&1 && [ ! -f "$stamp" ]; then
  echo "Switching the environment to the '$set' set: rebuilding $venv"
  rm -rf "$venv"
fi
[ -x "$venv/bin/python" ] || "$py" -m venv "$venv"
echo "Installing the locked '$set' set into $venv (first time: a few minutes)"
"$venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps --require-hashes -r "$lock"

# PyCUDA is source only: build it where a CUDA toolkit can compile it.
cuda_home=${CUDA_HOME:-${CUDA_PATH:-/usr/local/cuda}}
if command -v nvcc >/dev/null 2>&1 && [ -f "$cuda_home/include/cuda.h" ] && [ -f "$cuda_home/include/curand.h" ]; then
  echo "Building PyCUDA against the CUDA toolkit in $cuda_home (about 2 minutes)"
  PATH="$cuda_home/bin:$PATH" CUDA_ROOT="$cuda_home" \
    "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps --require-hashes -r requirements/pycuda.lock \
    || echo "PyCUDA did not build; notebook 09 will say so. Details: run 'make pycuda'." >&2
else
  echo "PyCUDA skipped: no CUDA toolkit with nvcc, cuda.h and curand.h here; install the toolkit and run 'make pycuda', or use environment.yml (conda-forge ships PyCUDA built)."
fi

# Notebooks run with notebooks/ as their working folder: make the repo importable.
"$venv/bin/python" -c 'import site,sys; open(site.getsitepackages()[0]+"/cuda_course.pth","w").write(sys.argv[1]+"\n")' "$(pwd)"

# The kernel lives inside the environment (--sys-prefix), so nothing outside the repo changes.
"$venv/bin/python" -m ipykernel install --sys-prefix --name cuda-course --display-name "CUDA course (Python $("$venv/bin/python" -c 'import sys;print("%d.%d"%sys.version_info[:2])'))" >/dev/null
# A first-time learner should land on notebook 00, not on a "get Jupyter news?" popup.
mkdir -p "$venv/share/jupyter/lab/settings"
cat > "$venv/share/jupyter/lab/settings/overrides.json" <<'JSON'
{"@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": false}}
JSON
rm -f "$venv"/.installed-*
touch "$stamp"
echo "Environment ready: $venv ('$set' set)"
