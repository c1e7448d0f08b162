#!/usr/bin/env python3
"""test_pip_install.py PYTHON_DIR: python/ installs offline as one package and works installed.

  1. copies PYTHON_DIR (python/ of the checkout) to a temporary folder (setuptools writes
     build/ and *.egg-info beside the sources; the checkout stays clean) and, when
     TILE_LA_LIBRARY names a built libtilela, puts it and its libtilert into tile_la/lib/;
  2. pip install --no-build-isolation --no-index --target SITE (the system's setuptools, no
     package index);
  3. runs test_abi.py and test_binding_args.py against SITE only (PYTHONPATH=SITE, checked
     through tile_la.__file__), and checks that the installed package loads its bundled
     libtilela with no environment variable set.
Skipped (exit 77, "skipped: ...") without pip or setuptools; the torch-based checks are
reported as skipped without torch, the rest still runs.
"""
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
LIB_ENV = ("TILE_LA_LIBRARY", "TILE_LA_LIB", "TILE_LA_PREFIX", "TILE_RT_LIBRARY", "TILE_RT_LIB")


def have(module):
    r = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True)
    return r.returncode == 0


def run(cmd, env, cwd):
    print("+", " ".join(map(str, cmd)), flush=True)
    return subprocess.run([str(c) for c in cmd], env=env, cwd=cwd).returncode


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.split("\n")[0])
    src = Path(sys.argv[1]).resolve()
    for module in ("pip", "setuptools"):
        if not have(module):
            print(f"skipped: {module} is not importable by {sys.executable}")
            return 77
    # pip builds a wheel: setuptools before 70.1 needs the wheel package for that
    if not (have("wheel") or have("setuptools.command.bdist_wheel")):
        print(f"skipped: neither wheel nor setuptools' bdist_wheel is importable by "
              f"{sys.executable}")
        return 77
    built = os.environ.get("TILE_LA_LIBRARY")
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        copy, site = tmp / "src", tmp / "site"
        shutil.copytree(src, copy, ignore=shutil.ignore_patterns(
            "build", "*.egg-info", "__pycache__"))
        bundled = None
        if built and Path(built).is_file():
            lib = copy / "tile_la" / "lib"
            lib.mkdir(exist_ok=True)
            shutil.copy2(built, lib / "libtilela.so")
            rt_dir = Path(built).resolve().parent
            for cand in (rt_dir / "libtilert.so.0", rt_dir.parent / "runtime" / "libtilert.so.0"):
                if cand.is_file():
                    shutil.copy2(cand, lib / "libtilert.so.0")
                    break
            bundled = site / "tile_la" / "lib" / "libtilela.so"

        env = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_ROOT_USER_ACTION="ignore",
                   PIP_NO_CACHE_DIR="1")
        rc = run([sys.executable, "-m", "pip", "install", "--no-build-isolation", "--no-index",
                  "--target", site, copy], env, tmp)
        if rc != 0:
            print(f"FAIL: pip install exited {rc}")
            return 1
        for name in ("__init__.py", "_abi.py", "_binding.py"):
            if not (site / "tile_la" / name).is_file():
                print(f"FAIL: {site / 'tile_la' / name} was not installed")
                return 1

        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        env.update(PYTHONPATH=str(site), PYTHONDONTWRITEBYTECODE="1",
                   TILE_LA_EXPECT_PACKAGE_DIR=str(site / "tile_la"))
        failed = []
        if run([sys.executable, HERE / "test_abi.py"], env, tmp) != 0:
            failed.append("test_abi.py")
        rc = run([sys.executable, HERE / "test_binding_args.py"], env, tmp)
        if rc == 77:
            print("skipped: the torch-based argument checks (no torch); the rest ran")
        elif rc != 0:
            failed.append("test_binding_args.py")

        if bundled is not None:
            clean = {k: v for k, v in env.items() if k not in LIB_ENV}
            probe = ("import tile_la, sys; libs = tile_la.load_library(); print(libs); "
                     f"sys.exit(0 if str(libs.la_path) == {str(bundled)!r} else 1)")
            if run([sys.executable, "-c", probe], clean, tmp) != 0:
                failed.append("the bundled library")
        else:
            print("skipped: the bundled-library check (TILE_LA_LIBRARY names no built library)")
    if failed:
        print("FAIL: " + ", ".join(failed))
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
