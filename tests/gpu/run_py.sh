#!/bin/sh
# run_py.sh SCRIPT [ARGS]: run a Python GPU test; exit 77 (skipped) when python3, torch or a
# CUDA device is missing, so machines without a GPU list the test as skipped, not passed.
command -v python3 >/dev/null 2>&1 || { echo "skipped: no python3"; exit 77; }
python3 -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null \
  || { echo "skipped: no torch with a CUDA device"; exit 77; }
script=$1
shift
case "$script" in
  *la_parity.py) exec python3 "$script" --no-fla "$@" ;;  # FLA: la_parity.py by hand
  *) exec python3 "$script" "$@" ;;
esac
