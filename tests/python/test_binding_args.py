#!/usr/bin/env python3
"""test_binding_args.py: tile_la's argument checks on the CPU (no GPU, no libtilela needed).

The binding checks everything on the host before any device work; the last check is that
the tensors are CUDA tensors. So a call with CPU tensors either fails with the error under
test, or, when every argument is right, with "q must be a CUDA tensor"; the library is
never loaded (load() is replaced by one that fails the test). Also: the per-device handle
is created once when threads race for it.

Needs torch (prints "skipped: ..." and exits 77 without it). Run with the package
importable: PYTHONPATH=python python3 tests/python/test_binding_args.py.
"""
import os
import sys
import threading
import time
import unittest
from pathlib import Path
from unittest import mock

try:
    import torch
except ImportError as e:
    print(f"skipped: torch is not importable by {sys.executable} ({e})")
    sys.exit(77)

import tile_la
from tile_la import _abi, _binding

B, T, H, HV, D = 1, 6, 1, 2, 64   # T != HV, so a head-first tensor has another shape


def inputs(kda, T=T, B=B, dtype=torch.bfloat16):
    q = torch.zeros(B, T, H, D, dtype=dtype)
    v = torch.zeros(B, T, HV, D, dtype=dtype)
    g = torch.zeros((B, T, HV, D) if kda else (B, T, HV))
    beta = torch.zeros(B, T, HV)
    return q, q.clone(), v, g, beta


def never_load():
    raise AssertionError("the library was loaded before the arguments were checked")


class Base(unittest.TestCase):
    def setUp(self):
        patcher = mock.patch.object(_abi, "load", never_load)
        patcher.start()
        self.addCleanup(patcher.stop)

    def call(self, kda, *args, **kwargs):
        fn = tile_la.chunk_kda if kda else tile_la.chunk_gated_delta_rule
        return fn(*args, **kwargs)

    def assertReachesDeviceCheck(self, kda, *args, **kwargs):
        """Every argument passed the host checks: only the CPU tensors are refused."""
        with self.assertRaisesRegex(ValueError, "must be a CUDA tensor"):
            self.call(kda, *args, **kwargs)


class ExactShapes(Base):
    def test_valid_cpu_call_reaches_the_device_check(self):
        for kda in (False, True):
            self.assertReachesDeviceCheck(kda, *inputs(kda))

    def test_head_first_g_is_refused(self):
        q, k, v, g, beta = inputs(False)
        g_hf = torch.zeros(B, HV, T)          # same element count, other layout
        with self.assertRaises(ValueError) as cm:
            tile_la.chunk_gated_delta_rule(q, k, v, g_hf, beta)
        msg = str(cm.exception)
        self.assertIn("g must have shape", msg)
        self.assertIn(str((B, T, HV)), msg)      # expected
        self.assertIn(str((B, HV, T)), msg)      # given
        q, k, v, g, beta = inputs(True)
        with self.assertRaisesRegex(ValueError, r"g must have shape \[B, T, HV, K\] = "
                                                r"\(1, 6, 2, 64\), got \(1, 2, 6, 64\)"):
            tile_la.chunk_kda(q, k, v, torch.zeros(B, HV, T, D), beta)

    def test_flat_or_reshaped_g_is_refused(self):
        q, k, v, g, beta = inputs(True)
        for bad in (g.flatten(), g.reshape(B, T, HV * D), g.reshape(T, HV, D)):
            with self.subTest(shape=tuple(bad.shape)), self.assertRaisesRegex(ValueError, "^g "):
                tile_la.chunk_kda(q, k, v, bad, beta)

    def test_head_first_beta_is_refused(self):
        for kda in (False, True):
            q, k, v, g, beta = inputs(kda)
            with self.assertRaisesRegex(ValueError, r"beta must have shape \[B, T, HV\] = "
                                                    r"\(1, 6, 2\), got \(1, 2, 6\)"):
                self.call(kda, q, k, v, g, beta.reshape(B, HV, T))

    def test_initial_state_shape(self):
        q, k, v, g, beta = inputs(True)
        with self.assertRaisesRegex(ValueError, "initial_state must have shape"):
            tile_la.chunk_kda(q, k, v, g, beta, initial_state=torch.zeros(B, HV, D * D))

    def test_non_tensor_g(self):
        q, k, v, g, beta = inputs(False)
        with self.assertRaisesRegex(TypeError, "g must be a torch.Tensor"):
            tile_la.chunk_gated_delta_rule(q, k, v, g.tolist(), beta)

    def test_per_head_parameters_keep_flat_views(self):
        # dt_bias [HV * K] is how FLA passes it: a parameter, not token data
        q, k, v, g, beta = inputs(True)
        self.assertReachesDeviceCheck(True, q, k, v, g, beta, use_gate_in_kernel=True,
                                      A_log=torch.zeros(HV), dt_bias=torch.zeros(HV * D))
        with self.assertRaisesRegex(ValueError, "dt_bias must have 128 elements"):
            tile_la.chunk_kda(q, k, v, g, beta, use_gate_in_kernel=True,
                              A_log=torch.zeros(HV), dt_bias=torch.zeros(HV))


class Keywords(Base):
    def test_unknown_keyword_raises_type_error(self):
        for kda, name in ((False, "chunk_gated_delta_rule"), (True, "chunk_kda")):
            with self.assertRaisesRegex(TypeError, rf"{name}\(\) got an unexpected keyword "
                                                   r"argument 'use_l2norm'"):
                self.call(kda, *inputs(kda), use_l2norm=True)

    def test_kda_only_keyword_on_gdn(self):
        with self.assertRaisesRegex(TypeError, "unexpected keyword argument 'safe_gate'"):
            tile_la.chunk_gated_delta_rule(*inputs(False), safe_gate=True)

    def test_known_keywords_pass(self):
        self.assertReachesDeviceCheck(False, *inputs(False), chunk_size=64, use_graph=False,
                                      cp_context=None)
        self.assertReachesDeviceCheck(True, *inputs(True), chunk_size=64, use_graph=True)
        self.assertReachesDeviceCheck(False, *inputs(False), use_gate_in_kernel=True,
                                      A_log=torch.zeros(HV), dt_bias=torch.zeros(HV))

    def test_chunk_size(self):
        with self.assertRaisesRegex(ValueError, "chunk_size"):
            tile_la.chunk_kda(*inputs(True), chunk_size=32)
        with self.assertRaisesRegex(TypeError, "chunk_size must be an integer"):
            tile_la.chunk_kda(*inputs(True), chunk_size=64.0)


class CuSeqlens(Base):
    def varlen(self, kda, cu, **kw):
        return self.call(kda, *inputs(kda), cu_seqlens=cu, **kw)

    def test_list_tuple_and_cpu_tensor_are_accepted(self):
        for cu in ([0, 2, 6], (0, 2, 2, 6), torch.tensor([0, 6]),
                   torch.tensor([0, 3, 6], dtype=torch.int32)):
            for kda in (False, True):
                with self.subTest(cu=cu, kda=kda):
                    self.assertReachesDeviceCheck(kda, *inputs(kda), cu_seqlens=cu)

    def test_accepted_offsets_are_kept_for_the_call(self):
        q, k, v, g, beta = inputs(False)
        c = _binding._prepare(False, q, k, v, g, beta, None, torch.zeros(3, HV, D, D), True,
                              False, False, False, False, None, None, None, False,
                              (0, 1, 1, 6), None, True)
        self.assertEqual((c.N, c.var.host, c.args.num_seqs), (3, [0, 1, 1, 6], 3))
        self.assertEqual(c.args.num_chunk_states, 2)   # 1 chunk + 0 + 1 chunk

    def test_floats_are_refused(self):
        for cu in ([0, 2.5, 6], [0.0, 6.0], torch.tensor([0.0, 6.0]), [0, True, 6]):
            with self.subTest(cu=cu), self.assertRaisesRegex(TypeError, "cu_seqlens"):
                self.varlen(False, cu)

    def test_other_types_are_refused_clearly(self):
        for cu in ("0,6", 6, {0: 6}, [[0, 6]]):
            with self.subTest(cu=cu), self.assertRaisesRegex(TypeError, "cu_seqlens"):
                self.varlen(True, cu)

    def test_values_beyond_int32_are_refused(self):
        for cu in ([0, 2 ** 31 + 6], torch.tensor([0, 2 ** 32 + 6], dtype=torch.int64),
                   [-2 ** 31 - 1, 6]):
            with self.subTest(cu=cu), self.assertRaisesRegex(ValueError, "int32 range"):
                self.varlen(False, cu)
        with self.assertRaisesRegex(ValueError, r"cu_seqlens_cpu\[1\] = 4294967302 .*int32"):
            self.varlen(False, [0, 6], cu_seqlens_cpu=[0, 2 ** 32 + 6])

    def test_contract_start_order_end(self):
        cases = [([1, 6], "must start at 0"),
                 ([0, 4, 2, 6], r"non-decreasing, got cu_seqlens\[1\] = 4 > cu_seqlens\[2\] = 2"),
                 ([0, 5], "must end at the number of tokens T = 6"),
                 ([0, 7], "must end at"),
                 ([], "N \\+ 1 >= 1"),
                 (torch.zeros(2, 2, dtype=torch.int64), "1-D")]
        for cu, pattern in cases:
            with self.subTest(cu=cu), self.assertRaisesRegex(ValueError, pattern):
                self.varlen(True, cu, return_intermediate_states=True)

    def test_host_copy_is_checked(self):
        with self.assertRaisesRegex(ValueError, "N \\+ 1 = 3 offsets"):
            self.varlen(False, [0, 2, 6], cu_seqlens_cpu=torch.tensor([0, 6]))
        with self.assertRaisesRegex(ValueError, r"cu_seqlens_cpu must be non-decreasing"):
            self.varlen(False, [0, 2, 6], cu_seqlens_cpu=[0, 7, 6])
        with self.assertRaisesRegex(ValueError, "differs"):
            self.varlen(False, [0, 2, 6], cu_seqlens_cpu=[0, 3, 6])
        with self.assertRaisesRegex(ValueError, "without cu_seqlens"):
            self.call(False, *inputs(False), cu_seqlens_cpu=[0, 6])

    def test_device_tensor_without_reading_it(self):
        # A tensor on a device is checked by dtype and shape only (reading it would
        # synchronise); its host copy cu_seqlens_cpu, when given, value by value. The meta
        # device stands in for CUDA here.
        meta = [x.to("meta") for x in inputs(True)]
        cu = torch.tensor([0, 2, 6], device="meta")
        self.assertReachesDeviceCheck(True, *meta, cu_seqlens=cu)
        self.assertReachesDeviceCheck(True, *meta, cu_seqlens=cu, cu_seqlens_cpu=[0, 2, 6])
        with self.assertRaisesRegex(ValueError, "cu_seqlens_cpu must be non-decreasing"):
            tile_la.chunk_kda(*meta, cu_seqlens=cu, cu_seqlens_cpu=[0, 4, 2])
        with self.assertRaisesRegex(TypeError, "cu_seqlens must hold integers"):
            tile_la.chunk_kda(*meta, cu_seqlens=cu.float())
        with self.assertRaisesRegex(ValueError, "cu_seqlens must be on"):
            tile_la.chunk_kda(*inputs(True), cu_seqlens=cu)

    def test_batch_must_be_one(self):
        with self.assertRaisesRegex(ValueError, "batch size is expected to be 1"):
            self.call(False, *inputs(False, B=2), cu_seqlens=[0, 6])

    def test_initial_state_follows_the_sequences(self):
        with self.assertRaisesRegex(ValueError, r"initial_state must have shape .* = \(3, 2"):
            self.varlen(True, [0, 1, 4, 6], initial_state=torch.zeros(1, HV, D, D))

    def test_max_num_seqs(self):
        with self.assertRaisesRegex(ValueError, "max_num_seqs"):
            self.varlen(True, [0, 2, 6], use_graph=True, max_num_seqs=4)


class ScalarDtypes(Base):
    """g and beta go to the library in q's dtype when they have it (read as they are),
    else in fp32: fp32 as given, fp64 and the other 16-bit dtype converted."""

    def args(self, kda, qdt, gdt, bdt):
        q, k, v, g, beta = inputs(kda, dtype=qdt)
        return _binding._prepare(kda, q, k, v, g.to(gdt), beta.to(bdt), None, None, False,
                                 False, False, False, False, None, None, None, False, None,
                                 None, False).args

    def test_dtypes_in_the_args(self):
        bf, f16, f32, f64 = torch.bfloat16, torch.float16, torch.float32, torch.float64
        BF, F16, F32 = _abi.TILE_LA_BF16, _abi.TILE_LA_F16, _abi.TILE_LA_F32
        for kda in (False, True):
            for qdt, gdt, bdt, want in [(bf, bf, bf, (BF, BF)), (bf, f32, bf, (F32, BF)),
                                        (f16, f16, f32, (F16, F32)), (bf, f16, f64, (F32, F32)),
                                        (f16, f32, f32, (F32, F32))]:
                with self.subTest(kda=kda, q=qdt, g=gdt, beta=bdt):
                    a = self.args(kda, qdt, gdt, bdt)
                    self.assertEqual((a.gate_dtype, a.beta_dtype), want)

    def test_kept_or_converted(self):
        x = torch.arange(12, dtype=torch.bfloat16).reshape(2, 6)
        kept = _binding._scalar(x.t(), (12,), _abi.TILE_LA_BF16)   # contiguous, same values
        self.assertEqual((kept.dtype, kept.is_contiguous()), (torch.bfloat16, True))
        self.assertTrue(torch.equal(kept, x.t().reshape(12)))
        wide = _binding._scalar(x.double(), (3, 4), _abi.TILE_LA_F32)
        self.assertEqual((wide.dtype, tuple(wide.shape)), (torch.float32, (3, 4)))
        self.assertTrue(torch.equal(wide.reshape(2, 6), x.float()))

    def test_16_bit_g_and_beta_reach_the_device_check(self):
        for kda in (False, True):
            q, k, v, g, beta = inputs(kda)
            self.assertReachesDeviceCheck(kda, q, k, v, g.bfloat16(), beta.bfloat16())
            self.assertReachesDeviceCheck(kda, q, k, v, g, beta.half())


class CtypesRanges(Base):
    def test_token_count_beyond_int32(self):
        big = 2 ** 31 + 64     # views with stride 0: no memory behind them
        q = torch.zeros(1, 1, H, D, dtype=torch.bfloat16).expand(1, big, H, D)
        v = torch.zeros(1, 1, HV, D, dtype=torch.bfloat16).expand(1, big, HV, D)
        g = torch.zeros(1, 1, HV).expand(1, big, HV)
        with self.assertRaisesRegex(ValueError, r"seq_len = 2147483712 does not fit"):
            tile_la.chunk_gated_delta_rule(q, q, v, g, g)

    def test_scale_must_be_a_number(self):
        with self.assertRaisesRegex(TypeError, "scale must be a number"):
            tile_la.chunk_kda(*inputs(True), scale="0.1")
        with self.assertRaisesRegex(ValueError, "scale"):
            tile_la.chunk_kda(*inputs(True), scale=1e39)


class HandleLock(unittest.TestCase):
    def test_one_handle_per_device_under_races(self):
        created = []

        class FakeLa:
            @staticmethod
            def tile_la_create(device, out):
                created.append(device)
                time.sleep(0.05)   # wide window: without the lock every thread gets here
                out._obj.value = 1000 + len(created)
                return 0

            @staticmethod
            def tile_la_set_options(handle, opt):
                return 0

        class FakeLibs:
            la = FakeLa()

        saved = dict(_binding._handles)
        _binding._handles.clear()
        try:
            with mock.patch.object(torch.cuda, "init", lambda: None):
                barrier = threading.Barrier(8)
                got = []

                def worker():
                    barrier.wait()
                    got.append(_binding._handle(FakeLibs(), 0).value)
                threads = [threading.Thread(target=worker) for _ in range(8)]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join()
            self.assertEqual(created, [0])
            self.assertEqual(set(got), {1001})
        finally:
            _binding._handles.clear()
            _binding._handles.update(saved)


def main():
    print(f"tile_la from {Path(tile_la.__file__).parent}, torch {torch.__version__}")
    expect = os.environ.get("TILE_LA_EXPECT_PACKAGE_DIR")
    if expect and Path(tile_la.__file__).parent != Path(expect).resolve():
        print(f"FAIL: expected the package from {expect}")
        return 1
    result = unittest.main(argv=[sys.argv[0], "-v"], exit=False).result
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
