#!/usr/bin/env python3
"""Self-checks of the numpy reference on tiny random models (no engine needed).

Each check compares two different computations of the same quantity: prefill against
token-by-token decode, chunked KDA against the recurrence, absorbed MLA against the naive
form, a batch of sequences against each alone, and the readers against hand-worked values.
"""

import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import k3_reference as ref  # noqa: E402
import make_tiny_model  # noqa: E402

TOKENS = [5, 17, 200, 3, 99, 42, 42, 7, 311, 0, 150, 64, 1, 2, 250, 19, 88, 123, 9, 77]


def relative_error(actual, expected):
    return float(np.max(np.abs(actual - expected)) / np.max(np.abs(expected)))


class ReaderTest(unittest.TestCase):
    def test_bf16_bits_are_the_top_half_of_float32(self):
        bits = np.array([0x3F80, 0xC040, 0x0000, 0x3E00], dtype=np.uint16)
        np.testing.assert_array_equal(ref.bf16_bits_to_float64(bits), [1.0, -3.0, 0.0, 0.125])

    def test_mxfp4_low_nibble_is_the_even_element(self):
        packed = np.zeros((1, 16), dtype=np.uint8)
        packed[0, 0] = 0x9A      # element 0: code 0xA = -1.0, element 1: code 0x9 = -0.5
        packed[0, 1] = 0x71      # element 2: code 0x1 = 0.5,  element 3: code 0x7 = 6.0
        scale = np.array([[128]], dtype=np.uint8)   # 2^(128-127) = 2
        values = ref.mxfp4_dequantize(packed, scale)
        self.assertEqual(values.shape, (1, 32))
        np.testing.assert_array_equal(values[0, :4], [-2.0, -1.0, 1.0, 12.0])
        np.testing.assert_array_equal(values[0, 4:], 0.0)

    def test_mxfp4_scale_applies_per_block_of_32(self):
        packed = np.full((1, 32), 0x22, dtype=np.uint8)   # every element 1.0
        scale = np.array([[127, 125]], dtype=np.uint8)
        values = ref.mxfp4_dequantize(packed, scale)
        np.testing.assert_array_equal(values[0, :32], 1.0)
        np.testing.assert_array_equal(values[0, 32:], 0.25)

    def test_names_with_and_without_prefix_and_legacy_spelling(self):
        self.assertEqual(ref.canonical_name("language_model.model.norm.weight"), "model.norm.weight")
        self.assertEqual(ref.canonical_name("model.layers.3.mlp_res.proj_weight"),
                         "model.layers.3.mlp_res_proj.weight")
        self.assertEqual(ref.canonical_name("language_model.model.output_attn_res.norm_weight"),
                         "model.output_attn_res_norm.weight")


class KdaKernelTest(unittest.TestCase):
    def inputs(self, steps, heads=3, d=8, dv=6, seed=1):
        rng = np.random.default_rng(seed)
        q = ref.l2_normalize(rng.normal(size=(steps, heads, d))) * d ** -0.5
        k = ref.l2_normalize(rng.normal(size=(steps, heads, d)))
        v = rng.normal(size=(steps, heads, dv))
        g = -5.0 * ref.sigmoid(rng.normal(size=(steps, heads, d)) * 2.0)   # lower-bound gate
        beta = ref.sigmoid(rng.normal(size=(steps, heads)))
        state = rng.normal(size=(heads, d, dv))
        return q, k, v, g, beta, state

    def test_chunked_matches_recurrent_across_chunk_sizes(self):
        q, k, v, g, beta, state = self.inputs(150)
        o_ref, s_ref = ref.kda_recurrent(q, k, v, g, beta, state)
        for chunk in (1, 7, 16, 64, 200):
            o, s = ref.kda_chunked(q, k, v, g, beta, state, chunk)
            self.assertLess(relative_error(o, o_ref), 1e-10, f"chunk {chunk}")
            self.assertLess(relative_error(s, s_ref), 1e-10, f"chunk {chunk}")

    def test_chunked_survives_strong_decay_over_a_full_chunk(self):
        # g near the lower bound -5 for 64 steps: exp(sum g) = e^-320 underflows if factored.
        q, k, v, g, beta, state = self.inputs(128, seed=2)
        g = np.full_like(g, -4.99)
        o_ref, _ = ref.kda_recurrent(q, k, v, g, beta, state)
        o, _ = ref.kda_chunked(q, k, v, g, beta, state, 64)
        self.assertTrue(np.all(np.isfinite(o)))
        self.assertLess(relative_error(o, o_ref), 1e-10)

    def test_state_carries_across_calls(self):
        q, k, v, g, beta, state = self.inputs(40, seed=3)
        o_all, s_all = ref.kda_recurrent(q, k, v, g, beta, state)
        o_a, s_a = ref.kda_recurrent(q[:25], k[:25], v[:25], g[:25], beta[:25], state)
        o_b, s_b = ref.kda_chunked(q[25:], k[25:], v[25:], g[25:], beta[25:], s_a, 8)
        self.assertLess(relative_error(np.concatenate([o_a, o_b]), o_all), 1e-10)
        self.assertLess(relative_error(s_b, s_all), 1e-10)

    def test_causal_conv_history_makes_split_calls_equal_one_call(self):
        rng = np.random.default_rng(4)
        x, w = rng.normal(size=(9, 5)), rng.normal(size=(5, 4))
        whole, _ = ref.causal_conv(x, w, np.zeros((3, 5)))
        first, hist = ref.causal_conv(x[:4], w, np.zeros((3, 5)))
        second, _ = ref.causal_conv(x[4:], w, hist)
        np.testing.assert_allclose(np.concatenate([first, second]), whole, rtol=1e-14)
        # tap K-1 multiplies the current token: a unit impulse at t=0 shows w[:, ::-1]
        impulse = np.zeros((4, 5))
        impulse[0] = 1.0
        out, _ = ref.causal_conv(impulse, w, np.zeros((3, 5)))
        np.testing.assert_allclose(out, w[:, ::-1].T)


class ModelTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.model_dir = make_tiny_model.write_model(os.path.join(cls.tmp.name, "tiny"), seed=7)
        cls.model = ref.Model(cls.model_dir)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_prefill_and_decode_agree(self):
        prefill, _ = self.model.prefill(TOKENS)
        decode, _ = self.model.decode(TOKENS)
        self.assertLess(relative_error(decode, prefill), 1e-4)
        self.assertLess(relative_error(decode, prefill), 1e-10)  # float64 throughout

    def test_chunked_prefill_matches_recurrent_prefill(self):
        recurrent, _ = self.model.prefill(TOKENS, ref.Options(kda="recurrent"))
        for chunk in (4, 64):
            chunked, _ = self.model.prefill(TOKENS, ref.Options(kda="chunked", chunk_size=chunk))
            self.assertLess(relative_error(chunked, recurrent), 1e-10, f"chunk {chunk}")

    def test_absorbed_mla_matches_naive_mla(self):
        naive, _ = self.model.prefill(TOKENS, ref.Options(mla="naive"))
        absorbed, _ = self.model.prefill(TOKENS, ref.Options(mla="absorbed"))
        self.assertLess(relative_error(absorbed, naive), 1e-10)

    def test_prefill_then_decode_continues_the_sequence(self):
        whole, _ = self.model.prefill(TOKENS)
        head, seq = self.model.prefill(TOKENS[:11])
        tail = [self.model.forward([(seq, [t])], ref.Options(mla="absorbed"))[0][0]
                for t in TOKENS[11:]]
        self.assertLess(relative_error(np.concatenate([head, np.stack(tail)]), whole), 1e-10)

    def test_batch_of_different_lengths_equals_each_alone(self):
        prompts = [TOKENS[:3], TOKENS[5:17], TOKENS[:1], TOKENS[2:9]]
        alone = [self.model.prefill(p)[0] for p in prompts]
        seqs = [ref.Sequence(self.model) for _ in prompts]
        batched = self.model.forward(list(zip(seqs, prompts)), ref.Options())
        for a, b in zip(batched, alone):
            self.assertLess(relative_error(a, b), 1e-12)
        # then one batched decode step per sequence against the sequence run alone
        step = self.model.forward([(s, [11 + i]) for i, s in enumerate(seqs)],
                                  ref.Options(mla="absorbed"))
        for i, p in enumerate(prompts):
            full, _ = self.model.prefill(p + [11 + i])
            self.assertLess(relative_error(step[i][0], full[-1]), 1e-10)

    def test_logits_depend_on_the_past(self):
        # guards against a mixer that ignores its state: change token 0, the last logits move
        a, _ = self.model.prefill([5, 9, 9, 9])
        b, _ = self.model.prefill([6, 9, 9, 9])
        self.assertGreater(relative_error(a[-1], b[-1]), 1e-3)

    def test_greedy_generation_is_the_argmax_of_prefill(self):
        generated = self.model.generate(TOKENS[:4], 6)
        sequence = TOKENS[:4]
        for token in generated:
            logits, _ = self.model.prefill(sequence)
            self.assertEqual(token, int(np.argmax(logits[-1])))
            sequence = sequence + [token]


class PrecisionTest(unittest.TestCase):
    def test_float32_run_stays_close_to_float64(self):
        with tempfile.TemporaryDirectory() as tmp:
            model_dir = make_tiny_model.write_model(os.path.join(tmp, "m"), seed=13)
            exact, _ = ref.Model(model_dir).prefill(TOKENS)
            single, _ = ref.Model(model_dir, np.float32).prefill(TOKENS)
            single_decode, _ = ref.Model(model_dir, np.float32).decode(TOKENS)
            self.assertEqual(single.dtype, np.float32)
            err = relative_error(single, exact)
            self.assertGreater(err, 0.0)       # really computed in float32
            self.assertLess(err, 1e-4)
            self.assertLess(relative_error(single_decode, exact), 1e-4)


class LayoutVariantsTest(unittest.TestCase):
    def test_unprefixed_names_load_to_the_same_model(self):
        with tempfile.TemporaryDirectory() as tmp:
            a = ref.Model(make_tiny_model.write_model(os.path.join(tmp, "a"), seed=3))
            b = ref.Model(make_tiny_model.write_model(os.path.join(tmp, "b"), seed=3, prefix="",
                                                      shards=1, a_log_extra=0))
            la, _ = a.prefill(TOKENS[:6])
            lb, _ = b.prefill(TOKENS[:6])
            np.testing.assert_array_equal(la, lb)

    def test_low_rank_gate_and_no_attention_residual_variants(self):
        with tempfile.TemporaryDirectory() as tmp:
            for name, kwargs in (("lowrank", {"full_rank_gate": False}),
                                 ("block1", {"block_size": 1})):
                model = ref.Model(make_tiny_model.write_model(os.path.join(tmp, name), seed=5,
                                                              **kwargs))
                prefill, _ = model.prefill(TOKENS[:9], ref.Options(kda="chunked", chunk_size=4))
                decode, _ = model.decode(TOKENS[:9])
                self.assertLess(relative_error(decode, prefill), 1e-10, name)


FAKE_ENGINE = """#!{python}
# Stands in for kimi-engine: synth/eval/generate answered by the reference itself, with the
# logits scaled by 1 + {error} so the comparison has something to catch, and in prefill the
# expert choice with the {swap!r} margin between its k-th and (k+1)-th scores ("closest",
# "farthest"; None: none) taken the other way.
import sys
sys.path.insert(0, {here!r})
import numpy as np
import k3_reference as ref
import make_tiny_model
args = sys.argv[1:]
opt = dict(zip(args[1::2], args[2::2]))
if args[0] == "synth":
    make_tiny_model.write_model(opt["--out"], seed=21)
    sys.exit(0)
model = ref.Model(opt["--model"])
ids = [int(t) for t in opt["--token-ids"].split(",")]
if args[0] == "eval":
    if opt.get("--mode") == "decode":
        logits, _ = model.decode(ids)
    elif {swap!r} is None:
        logits, _ = model.prefill(ids)
    else:
        margins = []
        model.prefill(ids, ref.Options(route_margins=margins))
        pick = min if {swap!r} == "closest" else max
        layer, row, _ = pick(margins, key=lambda m: m[2])
        logits, _ = model.prefill(ids, ref.Options(route_swaps=[(layer, row)]))
    (logits * (1.0 + {error})).astype("<f4").tofile(opt["--dump-logits"])
elif args[0] == "generate":
    print("ids:", " ".join(map(str, model.generate(ids, int(opt["--max-tokens"])))))
"""


class EngineDriverTest(unittest.TestCase):
    def run_driver(self, error, swap=None, extra=()):
        with tempfile.TemporaryDirectory() as tmp:
            engine = os.path.join(tmp, "fake-engine")
            with open(engine, "w") as f:
                f.write(FAKE_ENGINE.format(python=sys.executable, here=HERE, error=error, swap=swap))
            os.chmod(engine, 0o755)
            return subprocess.run(
                [sys.executable, os.path.join(HERE, "check_engine.py"), "--engine", engine,
                 "--synth-preset", "k3-nano", "--decode-flag", "--mode decode",
                 "--greedy-steps", "5"] + list(extra), capture_output=True, text=True)

    def closest_expert_choice(self):
        """(margin, logit error) of the fake engine's model's most nearly tied expert choice on
        check_engine's default prompt, the error being what taking it the other way changes."""
        with tempfile.TemporaryDirectory() as tmp:
            import check_engine
            model = ref.Model(make_tiny_model.write_model(os.path.join(tmp, "m"), seed=21))
            ids = [int(t) % model.cfg.vocab_size for t in check_engine.DEFAULT_TOKEN_IDS.split(",")]
            margins = []
            plain, _ = model.prefill(ids, ref.Options(route_margins=margins))
            layer, row, margin = min(margins, key=lambda m: m[2])
            other, _ = model.prefill(ids, ref.Options(route_swaps=[(layer, row)]))
            return margin, relative_error(other, plain)

    def test_accepts_a_near_tied_expert_choice_taken_the_other_way(self):
        margin, error = self.closest_expert_choice()
        tolerance = 2 * margin  # the choice is a near tie, its effect on the logits is not
        self.assertGreater(error, tolerance)
        done = self.run_driver(0.0, swap="closest", extra=["--tolerance", f"{tolerance:.6e}"])
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assertIn("is a near tie", done.stdout)

    def test_rejects_a_decisive_expert_choice_taken_the_other_way(self):
        done = self.run_driver(0.0, swap="farthest")
        self.assertEqual(done.returncode, 1, done.stdout + done.stderr)
        self.assertNotIn("is a near tie", done.stdout)

    def test_accepts_an_engine_within_tolerance(self):
        done = self.run_driver(1e-5)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assertIn("greedy: 5 steps compared, ok", done.stdout)

    def test_rejects_an_engine_outside_tolerance(self):
        done = self.run_driver(1e-2)
        self.assertEqual(done.returncode, 1, done.stdout + done.stderr)
        self.assertIn("prefill: max relative error 1.000e-02", done.stdout)


class CommandLineTest(unittest.TestCase):
    def test_writes_float32_logits_per_token(self):
        with tempfile.TemporaryDirectory() as tmp:
            model_dir = make_tiny_model.write_model(os.path.join(tmp, "m"), seed=11)
            ids = "4,8,15,16,23,42"
            outputs = {}
            for mode in ("prefill", "decode"):
                out = os.path.join(tmp, mode + ".bin")
                subprocess.run([sys.executable, os.path.join(HERE, "k3_reference.py"),
                                "--model", model_dir, "--token-ids", ids, "--out", out,
                                "--mode", mode], check=True)
                outputs[mode] = np.fromfile(out, dtype="<f4").reshape(6, 320)
            self.assertLess(relative_error(outputs["decode"], outputs["prefill"]), 1e-6)
            expected, _ = ref.Model(model_dir).prefill([4, 8, 15, 16, 23, 42])
            np.testing.assert_array_equal(outputs["prefill"], expected.astype(np.float32))


if __name__ == "__main__":
    unittest.main(verbosity=2)
