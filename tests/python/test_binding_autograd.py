#!/usr/bin/env python3
"""test_binding_autograd.py: chunk_kda's and chunk_gated_delta_rule's autograd plumbing on the
CPU (no GPU, no libtilela).

The kernels' calls (_binding._forward, _binding._backward) are replaced by stand-ins that
return marked tensors, so what is tested is the routing around them: chunk_kda takes the
differentiable path exactly when an input requires grad; each gradient reaches its own input
in that input's dtype and shape (dt_bias as FLA passes it, [HV * D]); inputs that are absent or
unused by the gate (A_log, dt_bias without the in-kernel gate) get none; an unreturned final
state passes no dht; the forward's options reach the backward; with disable_recompute the
forward's workspace reaches the backward (both ops), and without it KDA's kept A and AQK
(saved_setup) do, GDN keeping none; GDN's call is a GDN call (its gate and
dt_bias per head). With torch >= 2.4 this goes through the custom ops
tile_la::{kda,gdn}_fwd / _bwd, with older torch through an autograd.Function; the GPU tests
(tests/gpu/la_bwd.py) check the numbers.

Needs torch (prints "skipped: ..." and exits 77 without it).
"""
import sys
import unittest
from unittest import mock

try:
    import torch
except ImportError as e:
    print(f"skipped: torch is not importable by {sys.executable} ({e})")
    sys.exit(77)

import tile_la
from tile_la import _binding

B, T, H, HV, D = 1, 5, 1, 2, 64
MARKS = {"q": 1.0, "k": 2.0, "v": 3.0, "g": 4.0, "beta": 5.0, "h0": 6.0, "A_log": 7.0,
         "dt_bias": 8.0}


SAVED = torch.arange(100, 228).to(torch.uint8)   # a saved setup, told apart from a workspace


def fake_forward(c, keep_workspace=False, keep_setup=False):
    o = torch.zeros(c.v.shape, dtype=c.q.dtype)
    ht = torch.zeros(c.N, c.HV, c.D, c.D) if c.output_final_state else None
    if keep_workspace:   # a workspace the backward must receive as it is
        c.fwd_workspace = torch.arange(256).to(torch.uint8)
    c.saved_setup = SAVED.clone() if keep_setup and c.kda else None
    return o, ht


class Recorder:
    def __init__(self):
        self.calls = []
        self.workspaces = []
        self.saved = []

    def backward(self, c, do, dht, fwd_workspace=None, saved_setup=None):
        self.calls.append((c, do, dht))
        self.workspaces.append(fwd_workspace)
        self.saved.append(saved_setup)

        def mark(name, x):
            return None if x is None else torch.full(x.shape, MARKS[name], dtype=x.dtype)
        return (mark("q", c.q), mark("k", c.k), mark("v", c.v), mark("g", c.g),
                mark("beta", c.beta), mark("h0", c.h0), mark("A_log", c.A_log),
                mark("dt_bias", c.dt_bias))


def leaf(*shape, dtype=torch.float32):
    return torch.zeros(*shape, dtype=dtype).requires_grad_(True)


class Autograd(unittest.TestCase):
    def setUp(self):
        self.rec = Recorder()
        for name, fn in (("_forward", fake_forward), ("_backward", self.rec.backward),
                         ("_require_cuda", lambda c: None)):
            patcher = mock.patch.object(_binding, name, fn)
            patcher.start()
            self.addCleanup(patcher.stop)

    def inputs(self):
        return dict(q=leaf(B, T, H, D, dtype=torch.bfloat16), k=leaf(B, T, H, D, dtype=torch.bfloat16),
                    v=leaf(B, T, HV, D, dtype=torch.bfloat16), g=leaf(B, T, HV, D),
                    beta=leaf(B, T, HV, dtype=torch.bfloat16))

    def test_every_gradient_reaches_its_input(self):
        x = self.inputs()
        h0, A_log, dt_bias = leaf(1, HV, D, D), leaf(HV), leaf(HV * D)
        o, ht = tile_la.chunk_kda(x["q"], x["k"], x["v"], x["g"], x["beta"], initial_state=h0,
                                  output_final_state=True, use_gate_in_kernel=True,
                                  A_log=A_log, dt_bias=dt_bias, use_qk_l2norm_in_kernel=True,
                                  scale=0.25)
        (o.float().sum() + ht.sum()).backward()
        for name, t in list(x.items()) + [("h0", h0), ("A_log", A_log), ("dt_bias", dt_bias)]:
            self.assertIsNotNone(t.grad, name)
            self.assertEqual(t.grad.dtype, t.dtype, name)
            self.assertEqual(t.grad.shape, t.shape, name)
            self.assertTrue(bool((t.grad == MARKS[name]).all()), name)
        self.assertEqual(len(self.rec.calls), 1)
        c, do, dht = self.rec.calls[0]
        self.assertEqual(c.args.scale, 0.25)
        self.assertEqual(c.args.use_qk_l2norm_in_kernel, 1)
        self.assertEqual(c.args.use_gate_in_kernel, 1)
        self.assertIsNotNone(dht)
        self.assertTrue(bool((do == 1).all()))

    def test_absent_and_unused_inputs_get_no_gradient(self):
        x = self.inputs()
        A_log = leaf(HV)   # without the in-kernel gate FLA ignores it, and so do we
        o, ht = tile_la.chunk_kda(x["q"], x["k"], x["v"], x["g"], x["beta"], A_log=A_log)
        self.assertIsNone(ht)
        o.float().sum().backward()
        self.assertIsNone(A_log.grad)
        self.assertIsNotNone(x["g"].grad)
        c, _, dht = self.rec.calls[0]
        self.assertIsNone(dht)           # no final state returned: no dht
        self.assertIsNone(c.h0)

    def test_no_grad_takes_the_plain_forward(self):
        x = {n: t.detach() for n, t in self.inputs().items()}
        with mock.patch.object(_binding, "_differentiable",
                               side_effect=AssertionError("took the autograd path")):
            o, _ = tile_la.chunk_kda(x["q"], x["k"], x["v"], x["g"], x["beta"])
            o2, _ = tile_la.chunk_gated_delta_rule(x["q"], x["k"], x["v"], x["g"][..., 0],
                                                   x["beta"])
        self.assertFalse(o.requires_grad)
        self.assertFalse(o2.requires_grad)

    def test_setup_kept_only_for_a_backward(self):
        # the op path without a gradient to take (as under torch.compile): KDA keeps no A and
        # AQK; with one it does
        kept = []

        def recording_forward(c, keep_workspace=False, keep_setup=False):
            kept.append(keep_setup)
            return fake_forward(c, keep_workspace, keep_setup)
        with mock.patch.object(_binding, "_forward", recording_forward):
            for grad in (False, True):
                x = self.inputs()
                if not grad:
                    x = {n: t.detach() for n, t in x.items()}
                _binding._differentiable(True, x["q"], x["k"], x["v"], x["g"], x["beta"], None,
                                         None, False, False, False, False, False, None, False,
                                         None, None, None, None)
        self.assertEqual(kept, [False, True])

    def test_gdn_gradients_reach_their_inputs(self):
        x = self.inputs()
        g = leaf(B, T, HV, dtype=torch.bfloat16)
        h0, A_log, dt_bias = leaf(1, HV, D, D), leaf(HV), leaf(HV)
        o, ht = tile_la.chunk_gated_delta_rule(x["q"], x["k"], x["v"], g, x["beta"],
                                               initial_state=h0, output_final_state=True,
                                               use_gate_in_kernel=True, A_log=A_log,
                                               dt_bias=dt_bias, state_v_first=True)
        (o.float().sum() + ht.sum()).backward()
        for name, t in [("q", x["q"]), ("k", x["k"]), ("v", x["v"]), ("g", g),
                        ("beta", x["beta"]), ("h0", h0), ("A_log", A_log), ("dt_bias", dt_bias)]:
            self.assertIsNotNone(t.grad, name)
            self.assertEqual(t.grad.dtype, t.dtype, name)
            self.assertEqual(t.grad.shape, t.shape, name)
            self.assertTrue(bool((t.grad == MARKS[name]).all()), name)
        c, _, dht = self.rec.calls[0]
        self.assertFalse(c.kda)
        self.assertEqual(tuple(c.g.shape), (B, T, HV))
        self.assertEqual(tuple(c.dt_bias.shape), (HV,))
        self.assertTrue(c.state_v_first)
        self.assertIsNotNone(dht)

    def test_disable_recompute_hands_the_forward_workspace_over(self):
        # both ops; GDN's forward keeps its workspace only with the keyword (save_for_backward)
        for gdn in (False, True):
            for disable in (False, True):
                x = self.inputs()
                extra = {"disable_recompute": True} if disable else {}
                if gdn:
                    o, _ = tile_la.chunk_gated_delta_rule(x["q"], x["k"], x["v"],
                                                          x["g"][..., 0].detach(), x["beta"],
                                                          **extra)
                else:
                    o, _ = tile_la.chunk_kda(x["q"], x["k"], x["v"], x["g"], x["beta"], **extra)
                o.float().sum().backward()
                ws, saved = self.rec.workspaces[-1], self.rec.saved[-1]
                if disable:
                    self.assertTrue(bool((ws == torch.arange(256).to(torch.uint8)).all()))
                else:
                    self.assertTrue(ws is None or ws.numel() == 0)
                # KDA's forward keeps A and AQK unless it keeps its workspace
                if not gdn and not disable:
                    self.assertTrue(saved is not None and bool((saved == SAVED).all()))
                else:
                    self.assertTrue(saved is None or saved.numel() == 0)

    def test_only_the_final_state_in_the_loss(self):
        x = self.inputs()
        h0 = leaf(1, HV, D, D)
        o, ht = tile_la.chunk_kda(x["q"], x["k"], x["v"], x["g"], x["beta"], initial_state=h0,
                                  output_final_state=True, disable_recompute=True)
        ht.sum().backward()
        c, do, dht = self.rec.calls[-1]
        self.assertTrue(bool((do == 0).all()))   # o's gradient: zeros, made for the backward
        self.assertEqual(tuple(do.shape), tuple(x["v"].shape))
        self.assertTrue(bool((dht == 1).all()))
        self.assertIsNotNone(h0.grad)

    def test_intermediate_states_refused_under_grad(self):
        x = self.inputs()
        with self.assertRaisesRegex(ValueError, "only for inference"):
            tile_la.chunk_kda(x["q"], x["k"], x["v"], x["g"], x["beta"],
                              return_intermediate_states=True)


if __name__ == "__main__":
    unittest.main()
