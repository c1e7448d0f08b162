#!/usr/bin/env python3
"""test_abi.py: the torch-free part of the tile_la package (python/tile_la/_abi.py) on the CPU.

  - every integer that goes into a ctypes field is range-checked (ctypes would wrap it) and
    floats are refused for integer fields;
  - the library lookup order (bundled lib/, prefix, TILE_LA_LIBRARY, the loader) and the
    error that lists what was tried, on fake package folders;
  - loading the process-wide library happens once when many threads ask at the same time;
  - with TILE_LA_LIBRARY naming a real build (ctest sets it), the library loads and its
    status names and CPU-only argument check answer through the shared struct.

Run with the package importable: PYTHONPATH=python python3 tests/python/test_abi.py (ctest
does this, and test_pip_install.py runs it against an installed copy).
"""
import ctypes
import os
import sys
import tempfile
import threading
import time
import unittest
from pathlib import Path
from unittest import mock

from tile_la import _abi


class IntegerFields(unittest.TestCase):
    def test_int_fields_refuse_values_that_wrap(self):
        a = _abi.TileLaFwdArgs()
        for value in (2 ** 31, -2 ** 31 - 1, 2 ** 32 + 5, 2 ** 63):
            with self.assertRaisesRegex(ValueError, r"TileLaFwdArgs\.seq_len = -?\d+ does not fit"):
                a.seq_len = value
        self.assertEqual(a.seq_len, 0)  # nothing was stored
        a.seq_len = 2 ** 31 - 1
        self.assertEqual(a.seq_len, 2 ** 31 - 1)

    def test_every_integer_field_is_checked(self):
        for name, ctype in _abi.TileLaFwdArgs._fields_:
            if ctype in (ctypes.c_float,):
                continue
            with self.subTest(field=name), self.assertRaises(ValueError):
                setattr(_abi.TileLaFwdArgs(), name, 2 ** 64)

    def test_unsigned_and_pointer_fields_refuse_negatives(self):
        a = _abi.TileLaFwdArgs()
        for name in ("workspace_size", "q", "stream", "cu_seqlens_host"):
            with self.subTest(field=name), self.assertRaises(ValueError):
                setattr(a, name, -1)
        a.q = None  # NULL stays allowed
        self.assertIsNone(a.q)

    def test_floats_are_refused_for_integer_fields(self):
        a = _abi.TileLaFwdArgs()
        with self.assertRaisesRegex(TypeError, "num_seqs takes an integer"):
            a.num_seqs = 3.0
        with self.assertRaisesRegex(TypeError, "workspace"):
            a.workspace = 1.5

    def test_constructor_arguments_are_checked(self):
        with self.assertRaises(ValueError):
            _abi.TileLaFwdArgs(batch=2 ** 31)
        with self.assertRaises(ValueError):
            _abi.TileLaFwdArgs(2 ** 40)  # positional: batch

    def test_float_field_overflow(self):
        a = _abi.TileLaFwdArgs()
        with self.assertRaisesRegex(ValueError, "scale"):
            a.scale = 1e39      # ctypes would store inf
        a.scale = float("inf")  # non-finite is the library's to name ("scale: ...")
        a.lower_bound = -5.0

    def test_tile_arg_union(self):
        self.assertEqual(_abi.arg_i32(-7).u.i32, -7)
        self.assertEqual(_abi.arg_ptr(2 ** 64 - 1).u.ptr, 2 ** 64 - 1)
        with self.assertRaises(ValueError):
            _abi.arg_i32(2 ** 31)
        with self.assertRaises(ValueError):
            _abi.arg_ptr(-1)


def touch(path):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"not an ELF file")
    return path


class Lookup(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def paths(self, environ, package_dir):
        return [p for _, p in _abi.library_candidates(environ, package_dir)]

    def test_order_bundled_prefix(self):
        prefix = self.root / "pfx"
        pkg = prefix / "lib" / "python3.11" / "site-packages" / "tile_la"
        self.assertEqual(self.paths({}, pkg), [pkg / "lib" / "libtilela.so"]
                         + [prefix / lib / "libtilela.so" for lib in _abi._LIBDIRS])
        self.assertEqual(_abi._LIBDIRS[:2], ("lib", "lib64"))

    def test_env_file_overrides_everything(self):
        pkg = self.root / "pfx" / "lib" / "python3.11" / "site-packages" / "tile_la"
        touch(pkg / "lib" / "libtilela.so")
        env = {"TILE_LA_LIBRARY": str(self.root / "x" / "libtilela.so")}
        self.assertEqual(self.paths(env, pkg), [self.root / "x" / "libtilela.so"])

    def test_prefix_env_replaces_the_derived_prefix(self):
        pkg = self.root / "pfx" / "lib" / "python3.11" / "site-packages" / "tile_la"
        env = {"TILE_LA_PREFIX": str(self.root / "other")}
        self.assertEqual(self.paths(env, pkg)[1:], [
            self.root / "other" / lib / "libtilela.so" for lib in _abi._LIBDIRS])

    def test_debian_local_prefix(self):
        pkg = self.root / "p" / "local" / "lib" / "python3.11" / "dist-packages" / "tile_la"
        paths = self.paths({}, pkg)
        self.assertIn(self.root / "p" / "local" / "lib" / "libtilela.so", paths)
        self.assertIn(self.root / "p" / "lib" / "libtilela.so", paths)

    def test_no_walking_up_from_a_checkout(self):
        pkg = self.root / "checkout" / "python" / "tile_la"
        touch(self.root / "checkout" / "build" / "kernels" / "libtilela.so")
        self.assertEqual(self.paths({}, pkg), [pkg / "lib" / "libtilela.so"])

    def test_older_env_name(self):
        self.assertEqual(self.paths({"TILE_LA_LIB": "/a/libtilela.so"}, self.root / "tile_la"),
                         [Path("/a/libtilela.so")])

    def test_first_existing_wins(self):
        pkg = self.root / "pfx" / "lib" / "python3.11" / "site-packages" / "tile_la"
        bundled = touch(pkg / "lib" / "libtilela.so")
        touch(self.root / "pfx" / "lib" / "libtilela.so")
        opened = []
        with mock.patch.object(_abi, "open_library", lambda p, env=None: opened.append(p)):
            _abi.find_and_open({}, pkg)
        self.assertEqual(opened, [bundled])

    def test_error_lists_every_place_tried(self):
        pkg = self.root / "pfx" / "lib" / "python3.11" / "site-packages" / "tile_la"
        with self.assertRaises(_abi.LibraryNotFoundError) as cm:
            _abi.find_and_open({"LD_LIBRARY_PATH": ""}, pkg)
        msg = str(cm.exception)
        for part in ("bundled with the package", "the installed prefix", "no such file",
                     "dynamic loader"):
            self.assertIn(part, msg)

    def test_missing_env_file_is_an_error(self):
        pkg = self.root / "pfx" / "lib" / "python3.11" / "site-packages" / "tile_la"
        touch(pkg / "lib" / "libtilela.so")
        env = {"TILE_LA_LIBRARY": str(self.root / "missing.so")}
        with self.assertRaises(_abi.LibraryNotFoundError) as cm:
            _abi.find_and_open(env, pkg)
        msg = str(cm.exception)
        self.assertIn("$TILE_LA_LIBRARY", msg)
        self.assertIn(str(self.root / "missing.so"), msg)
        # a file named explicitly and missing is an error, not a reason to search further
        self.assertNotIn("bundled", msg)
        self.assertNotIn("dynamic loader", msg)

    def test_existing_but_broken_library_is_reported(self):
        pkg = self.root / "tile_la"
        touch(pkg / "lib" / "libtilela.so")
        with self.assertRaises(_abi.LibraryNotFoundError) as cm:
            _abi.find_and_open({}, pkg)
        self.assertIn(str(pkg / "lib" / "libtilela.so"), str(cm.exception))

    def test_loader_search_is_last(self):
        pkg = self.root / "tile_la"
        seen = []

        def fake_cdll(name, *a, **k):
            seen.append(name)
            raise OSError("not found")
        with mock.patch.object(_abi.ctypes, "CDLL", fake_cdll):
            with self.assertRaises(_abi.LibraryNotFoundError) as cm:
                _abi.find_and_open({}, pkg)
        self.assertEqual(seen, ["libtilela.so"])
        self.assertIn("dynamic loader", str(cm.exception))


class LoadOnce(unittest.TestCase):
    def test_concurrent_first_use_loads_once(self):
        calls = []

        def slow_find():
            calls.append(1)
            time.sleep(0.05)   # wide window: without the lock every thread would get here
            return object()
        saved = _abi._loaded
        _abi._loaded = None
        try:
            with mock.patch.object(_abi, "find_and_open", slow_find):
                barrier = threading.Barrier(8)
                got = []

                def worker():
                    barrier.wait()
                    got.append(_abi.load())
                threads = [threading.Thread(target=worker) for _ in range(8)]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join()
            self.assertEqual(len(calls), 1)
            self.assertEqual(len(set(map(id, got))), 1)
        finally:
            _abi._loaded = saved


class EnvironOptions(unittest.TestCase):
    """The TILE_LA_* variables scripts used, mapped onto tile_la_options as the library read
    them: counts "0" off and n > 0 forced; switches "0" / "1"; the rest the rule."""

    def test_mapping(self):
        o = _abi.options_from_environ({})
        self.assertEqual([getattr(o, f) for f, _ in o._fields_], [_abi.TILE_LA_AUTO] * 11)
        o = _abi.options_from_environ({
            "TILE_LA_GDN_CP": "0", "TILE_LA_KDA_CP": "8", "TILE_LA_KDA_SPLIT": "x",
            "TILE_LA_KDA_T": "1", "TILE_LA_KDA_W": "1",
            "TILE_LA_KDA_MAPT": "0", "TILE_LA_KDA_NOCB": "", "TILE_LA_BWD_W": "0",
            "TILE_LA_EXACT_STATE": "1", "TILE_LA_FIRST_SEG": "60"})
        self.assertEqual(o.gdn_segments, _abi.TILE_LA_OFF)
        self.assertEqual(o.kda_segments, 8)
        self.assertEqual(o.kda_split, _abi.TILE_LA_OFF)       # not a count: off, as before
        self.assertEqual(o.kda_transposed, _abi.TILE_LA_AUTO)  # only "0" turns it off
        self.assertEqual(o.kda_wide, _abi.TILE_LA_ON)
        self.assertEqual(o.kda_map_kernel, _abi.TILE_LA_OFF)
        self.assertEqual(o.kda_prep_nocb, _abi.TILE_LA_AUTO)   # empty: unset
        self.assertEqual(o.bwd_wide, _abi.TILE_LA_OFF)
        self.assertEqual(o.exact_state, _abi.TILE_LA_ON)
        self.assertEqual(o.first_segment, 60)
        o = _abi.options_from_environ({"TILE_LA_KDA_CP": "-3", "TILE_LA_KDA_W": "2"})
        self.assertEqual((o.kda_segments, o.kda_wide), (_abi.TILE_LA_OFF, _abi.TILE_LA_AUTO))
        o = _abi.options_from_environ({"TILE_LA_KDA_SPLIT": str(2 ** 40)})
        self.assertEqual(o.kda_split, _abi.INT32_MAX)


@unittest.skipUnless(os.path.isfile(os.environ.get("TILE_LA_LIBRARY", "")),
                     "TILE_LA_LIBRARY names no built library")
class RealLibrary(unittest.TestCase):
    def test_load_and_check(self):
        libs = _abi.open_library(os.environ["TILE_LA_LIBRARY"])
        self.assertEqual(libs.status_name(_abi.TILE_OK), "TILE_OK")
        a = _abi.TileLaFwdArgs(batch=1, seq_len=64, num_heads=1, num_v_heads=1, head_dim=64,
                               dtype=_abi.TILE_LA_BF16)
        msg = ctypes.create_string_buffer(256)
        status = libs.la.tile_la_fwd_check(ctypes.byref(a), 1, msg, len(msg))
        self.assertNotEqual(status, _abi.TILE_OK)          # q is NULL
        self.assertTrue(msg.value.decode().split(":")[0] in ("q", "k", "v", "g", "beta", "o"),
                        msg.value)


def main():
    print(f"tile_la from {Path(_abi.__file__).parent}")
    expect = os.environ.get("TILE_LA_EXPECT_PACKAGE_DIR")
    if expect and Path(_abi.__file__).parent != Path(expect).resolve():
        print(f"FAIL: expected the package from {expect}")
        return 1
    result = unittest.main(argv=[sys.argv[0], "-v"], exit=False).result
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
