#!/usr/bin/python3
"""Write loom MLIR for a GPT decoder with a hand-written Megatron-LM plan.

The IR describes one pipeline micro-batch step across all data-parallel
replicas: the batch is micro_batch * dp, split over the `dp` grid axis. The
plan is expressed with upstream `shard` annotations on a 3-D grid
`dp x pp x tp` and `loom.stage` attributes:

* tokens split on the batch over `dp` (grid axis 0);
* the word embedding is vocab-parallel (rows split over `tp`, axis 2) and is
  tied with the LM head (used again, transposed, on the last stage);
* per layer, Megatron's tensor parallelism (Shoeybi et al. 2019, Fig. 3):
  QKV and fc1 column-parallel (weights split by columns over `tp`, with their
  biases), attention-output projection and fc2 row-parallel (split by rows);
  heads follow the QKV split by propagation;
* every loom op of layer i carries `loom.stage = (i * pp * V) // layers`
  (V = --virtual-stages; with V > 1 the value is the model chunk, and chunk c
  runs on pipeline rank c % pp, as in Megatron's interleaved schedule);
  embedding on stage 0, final norm and LM head on the last stage.

Attention is decomposed as Megatron-LM did it in 2021 (no fused/flash
attention): two batched matmuls around scale and softmax. Dropout is omitted
(no loom op; it costs no FLOPs and little memory traffic). The causal mask is
omitted by default (Megatron fuses scale+mask+softmax into one kernel);
--causal-mask adds it as a `loom.where` on a boolean buffer.

`--no-plan` writes the same model unplanned (no grid, no `shard` ops, no
`loom.stage`), still with batch micro_batch * dp: the input of the strategy
search (`loom-opt --loom-plan`).

Standard library only. `--stats` prints the exact parameter count of the
emitted IR and the forward FLOPs by the standard GEMM formula.
"""

import argparse
import sys
import time

DTYPE_BYTES = {"f32": 4, "f16": 2, "bf16": 2}


def parse_ffn(text, hidden):
    """`4h` -> 4*hidden, `16384` -> 16384."""
    t = text.strip().lower()
    if t.endswith("h"):
        return int(float(t[:-1] or "1") * hidden)
    return int(t)


def tensor(shape, dt):
    if not shape:
        return "tensor<%s>" % dt
    return "tensor<%sx%s>" % ("x".join(str(d) for d in shape), dt)


# --------------------------------------------------------------------------
# Exactly-known numbers
# --------------------------------------------------------------------------

def formula_numbers(layers, hidden, seq, vocab, ffn, batch):
    """FLOPs of the GEMMs (a multiply-add counts 2) for `batch` sequences.

    Per layer forward: QKV 6bsh^2, scores 2bs^2h, context 2bs^2h, projection
    2bsh^2, MLP 4bshf; logit layer 2bshV. With f = 4h this is Narayanan et
    al. (SC'21) eq. (3) divided by 4: F = 96Bslh^2(1 + s/(6h) + V/(16lh))
    counts forward + backward (2x forward) + one recomputed forward of the
    transformer layers; the logit layer is not recomputed.
    """
    b, s, h, l, V, f = batch, seq, hidden, layers, vocab, ffn
    layer_fwd = 2 * b * s * (3 * h * h + h * h + 2 * h * f) + 4 * b * s * s * h
    logit_fwd = 2 * b * s * h * V
    fwd = l * layer_fwd + logit_fwd
    return {
        "forward_flops": fwd,
        "train_flops_no_recompute": 3 * fwd,
        "train_flops_full_recompute": 4 * l * layer_fwd + 3 * logit_fwd,
    }


def megatron_F(batch, seq, layers, hidden, vocab):
    """Narayanan et al. SC'21 eq. (3): FLOPs per iteration of `batch` sequences."""
    B, s, l, h, V = batch, seq, layers, hidden, vocab
    return 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h))


def megatron_P(layers, hidden, seq, vocab):
    """Narayanan et al. SC'21 eq. (2)."""
    l, h, s, V = layers, hidden, seq, vocab
    return 12 * l * h * h * (1 + 13 / (12 * h) + (V + s) / (12 * l * h))


# --------------------------------------------------------------------------
# IR emission
# --------------------------------------------------------------------------

class Emitter:
    def __init__(self, args):
        self.a = args
        self.lines = []
        self.n = 0
        self.offset = 0
        self.params = 0
        self.dt = args.dtype
        self.shardings = {}
        self.plan = not args.no_plan

    def fresh(self, hint="v"):
        self.n += 1
        return "%%%s%d" % (hint, self.n)

    def emit(self, text):
        self.lines.append("  " + text)

    def stage_attr(self, stage, extra=""):
        parts = []
        if extra:
            parts.append(extra)
        if stage is not None and self.plan:
            parts.append("loom.stage = %d : i64" % stage)
        return (" {%s}" % ", ".join(parts)) if parts else ""

    def sharding(self, split_axes):
        """A shard.sharding value on @grid (one per distinct split, reused)."""
        key = repr(split_axes)
        if key not in self.shardings:
            name = self.fresh("s")
            axes = ", ".join("[%s]" % ", ".join(str(x) for x in d) for d in split_axes)
            self.emit("%s = shard.sharding @grid split_axes = [%s] : !shard.sharding" % (name, axes))
            self.shardings[key] = name
        return self.shardings[key]

    def annotate(self, value, shape, split_axes, for_users=True, dt=None):
        if not self.plan:
            return value
        s = self.sharding(split_axes)
        out = self.fresh("a")
        self.emit("%s = shard.shard %s to %s%s : %s" % (
            out, value, s, " annotate_for_users" if for_users else "", tensor(shape, dt or self.dt)))
        return out

    def weight(self, name, shape, stage, split_axes=None):
        v = self.fresh("w")
        self.emit('%s = loom.weight parameter "%s" from "%s"[%d]%s : %s' % (
            v, name, self.a.weights_file, self.offset, self.stage_attr(stage), tensor(shape, self.dt)))
        elems = 1
        for d in shape:
            elems *= d
        self.offset += elems * DTYPE_BYTES[self.dt]
        self.params += elems
        if split_axes is not None:
            v = self.annotate(v, shape, split_axes)
        return v

    def op(self, text, stage, types, attrs="", hint="v"):
        v = self.fresh(hint)
        self.emit("%s = %s%s : %s" % (v, text, self.stage_attr(stage, attrs), types))
        return v

    # -- building blocks ---------------------------------------------------

    def layer_norm(self, x, shape, prefix, stage):
        h = shape[-1]
        g = self.weight(prefix + ".weight", [h], stage)
        b = self.weight(prefix + ".bias", [h], stage)
        return self.op("loom.layer_norm %s scale %s bias %s" % (x, g, b), stage,
                       "%s, %s, %s" % (tensor(shape, self.dt), tensor([h], self.dt), tensor([h], self.dt)),
                       attrs="axis = %d : i64, epsilon = 1.000000e-05 : f64" % (len(shape) - 1))

    def linear(self, x, in_shape, n_out, prefix, stage, parallel):
        """x @ W + b with Megatron's column- or row-parallel split of W."""
        k = in_shape[-1]
        out_shape = in_shape[:-1] + [n_out]
        if parallel == "column":
            w = self.weight(prefix + ".weight", [k, n_out], stage, [[], [2]])
            bias = self.weight(prefix + ".bias", [n_out], stage, [[2]])
        else:
            w = self.weight(prefix + ".weight", [k, n_out], stage, [[2]])
            bias = self.weight(prefix + ".bias", [n_out], stage)
        y = self.op("loom.matmul %s, %s" % (x, w), stage,
                    "%s, %s" % (tensor(in_shape, self.dt), tensor([k, n_out], self.dt)))
        y = self.op("loom.binary add %s, %s" % (y, bias), stage,
                    "%s, %s" % (tensor(out_shape, self.dt), tensor([n_out], self.dt)))
        return y, out_shape

    def binary(self, kind, x, y, xs, ys, stage):
        return self.op("loom.binary %s %s, %s" % (kind, x, y), stage,
                       "%s, %s" % (tensor(xs, self.dt), tensor(ys, self.dt)))

    def reshape(self, x, src, dst, stage):
        return self.op("loom.reshape %s" % x, stage,
                       "%s -> %s" % (tensor(src, self.dt), tensor(dst, self.dt)))

    def transpose(self, x, shape, perm, stage):
        v = self.op("loom.transpose %s" % x, stage, tensor(shape, self.dt),
                    attrs="permutation = array<i64: %s>" % ", ".join(str(p) for p in perm))
        return v, [shape[p] for p in perm]

    # -- the model -----------------------------------------------------------

    def layer(self, i, x, stage):
        a = self.a
        B, S, H, nh = a.micro_batch * a.dp, a.seq, a.hidden, a.heads
        d = H // nh
        xs = [B, S, H]
        p = "layers.%d" % i
        # Attention block.
        ln = self.layer_norm(x, xs, p + ".input_layernorm", stage)
        heads = []
        if self.a.separate_qkv:
            # Three column-parallel [h, h] projections: the same FLOPs and
            # parameters as the fused one, without loom.slice.
            for j, nm in enumerate(("query", "key", "value")):
                t, _ = self.linear(ln, xs, H, p + ".attention." + nm, stage, "column")
                t = self.reshape(t, xs, [B, S, nh, d], stage)
                t, _ = self.transpose(t, [B, S, nh, d], [0, 2, 1, 3], stage)  # [B, nh, S, d]
                heads.append(t)
        elif self.a.qkv_layout == "gpt2":
            # GPT-2's c_attn: one [h, 3h] weight holding q, k and v one after
            # another, the result sliced into thirds.
            qkv, _ = self.linear(ln, xs, 3 * H, p + ".attn.c_attn", stage, "column")
            for j in range(3):
                t = self.op("loom.slice %s" % qkv, stage, tensor([B, S, 3 * H], self.dt),
                            attrs="offsets = array<i64: 0, 0, %d>, sizes = array<i64: %d, %d, %d>, "
                                  "strides = array<i64: 1, 1, 1>" % (j * H, B, S, H))
                t = self.reshape(t, xs, [B, S, nh, d], stage)
                t, _ = self.transpose(t, [B, S, nh, d], [0, 2, 1, 3], stage)  # [B, nh, S, d]
                heads.append(t)
        else:
            qkv, _ = self.linear(ln, xs, 3 * H, p + ".attention.query_key_value", stage, "column")
            # Megatron's QKV layout is [s, b, np, 3*hn]: q, k, v interleaved per
            # head, so splitting the 3h columns over tp splits heads.
            qkv4 = self.reshape(qkv, [B, S, 3 * H], [B, S, nh, 3 * d], stage)
            for j in range(3):
                t = self.op("loom.slice %s" % qkv4, stage, tensor([B, S, nh, 3 * d], self.dt),
                            attrs="offsets = array<i64: 0, 0, 0, %d>, sizes = array<i64: %d, %d, %d, %d>, "
                                  "strides = array<i64: 1, 1, 1, 1>" % (j * d, B, S, nh, d))
                t, _ = self.transpose(t, [B, S, nh, d], [0, 2, 1, 3], stage)  # [B, nh, S, d]
                heads.append(t)
        q, k, v = heads
        kt, _ = self.transpose(k, [B, nh, S, d], [0, 1, 3, 2], stage)  # [B, nh, d, S]
        scores = self.op("loom.matmul %s, %s" % (q, kt), stage,
                         "%s, %s" % (tensor([B, nh, S, d], self.dt), tensor([B, nh, d, S], self.dt)))
        ss = [B, nh, S, S]
        scale = self.op("loom.constant dense<%s>" % repr(1.0 / d ** 0.5), None, tensor([], self.dt))
        scores = self.binary("mul", scores, scale, ss, [], stage)
        if a.causal_mask:
            scores = self.op("loom.where %s, %s, %s" % (self.mask, scores, self.neg_inf), stage,
                             "%s, %s, %s" % (tensor([S, S], "i1"), tensor(ss, self.dt), tensor([], self.dt)))
        probs = self.op("loom.softmax %s" % scores, stage, tensor(ss, self.dt), attrs="axis = 3 : i64")
        ctx = self.op("loom.matmul %s, %s" % (probs, v), stage,
                      "%s, %s" % (tensor(ss, self.dt), tensor([B, nh, S, d], self.dt)))
        ctx, _ = self.transpose(ctx, [B, nh, S, d], [0, 2, 1, 3], stage)
        ctx = self.reshape(ctx, [B, S, nh, d], xs, stage)
        proj, _ = self.linear(ctx, xs, H, p + ".attention.dense", stage, "row")
        x = self.binary("add", x, proj, xs, xs, stage)
        # MLP block.
        ln = self.layer_norm(x, xs, p + ".post_attention_layernorm", stage)
        h1, h1s = self.linear(ln, xs, self.ffn, p + ".mlp.dense_h_to_4h", stage, "column")
        g = self.op("loom.unary gelu %s" % h1, stage, tensor(h1s, self.dt))
        h2, _ = self.linear(g, h1s, H, p + ".mlp.dense_4h_to_h", stage, "row")
        return self.binary("add", x, h2, xs, xs, stage)

    def build(self):
        a = self.a
        B, S, H, V = a.micro_batch * a.dp, a.seq, a.hidden, a.vocab
        self.ffn = parse_ffn(a.ffn, H)
        chunks = a.pp * a.virtual_stages
        last = chunks - 1
        xs = [B, S, H]
        hdr = [
            "// GPT decoder: layers=%d hidden=%d heads=%d ffn=%d seq=%d vocab=%d dtype=%s"
            % (a.layers, H, a.heads, self.ffn, S, V, self.dt),
        ]
        if self.plan:
            hdr += [
                "// Megatron-LM plan: dp=%d pp=%d tp=%d virtual-stages=%d micro-batch=%d"
                " (IR batch = micro-batch * dp = %d)" % (a.dp, a.pp, a.tp, a.virtual_stages, a.micro_batch, B),
                "// Generated by bench/gpt_plan.py; dropout omitted.",
                'shard.grid @grid(shape = %dx%dx%d) {loom.axis_names = ["dp", "pp", "tp"], '
                "loom.pipeline_axis = 1 : i64}" % (a.dp, a.pp, a.tp),
            ]
        else:
            hdr += [
                "// No plan (no grid, shard ops or loom.stage): IR batch = micro-batch * dp = %d * %d = %d"
                % (a.micro_batch, a.dp, B),
                "// Generated by bench/gpt_plan.py --no-plan; dropout omitted.",
            ]
        hdr.append("func.func @main(%%tokens: %s) -> %s {" % (tensor([B, S], "i64"), tensor([B, S, V], self.dt)))
        tok = self.annotate("%tokens", [B, S], [[0]], for_users=False, dt="i64")
        # Embeddings (stage 0): vocab-parallel word embedding, learned positions.
        wte = self.weight("embedding.word_embeddings.weight", [V, H], 0, [[2]])
        wpe = self.weight("embedding.position_embeddings.weight", [S, H], 0)
        x = self.op("loom.embedding %s, %s" % (wte, tok), 0,
                    "%s, %s" % (tensor([V, H], self.dt), tensor([B, S], "i64")))
        x = self.binary("add", x, wpe, xs, [S, H], 0)
        if a.causal_mask:
            m = self.fresh("w")
            self.emit('%s = loom.weight buffer "causal_mask" from "%s"[%d] : %s' % (
                m, a.weights_file, self.offset, tensor([S, S], "i1")))
            self.offset += S * S
            self.mask = m
            self.neg_inf = self.op("loom.constant dense<-1.000000e+04>", None, tensor([], self.dt))
        for i in range(a.layers):
            x = self.layer(i, x, (i * chunks) // a.layers)
        x = self.layer_norm(x, xs, "final_layernorm", last)
        if a.untied:
            head = self.weight("lm_head.weight", [H, V], last, [[], [2]])
        else:
            head, _ = self.transpose(wte, [V, H], [1, 0], last)
        logits = self.op("loom.matmul %s, %s" % (x, head), last,
                         "%s, %s" % (tensor(xs, self.dt), tensor([H, V], self.dt)))
        logits = self.annotate(logits, [B, S, V], [[0], [], [2]], for_users=False)
        self.emit("return %s : %s" % (logits, tensor([B, S, V], self.dt)))
        return "\n".join(hdr + self.lines + ["}"]) + "\n"


def check(args):
    errs = []
    if args.hidden % args.heads:
        errs.append("--hidden must be a multiple of --heads")
    if args.heads % args.tp:
        errs.append("--heads must be a multiple of --tp")
    if args.vocab % args.tp:
        errs.append("--vocab must be a multiple of --tp")
    if parse_ffn(args.ffn, args.hidden) % args.tp:
        errs.append("--ffn must be a multiple of --tp")
    if args.layers < args.pp * args.virtual_stages:
        errs.append("--layers must be at least pp * virtual-stages")
    if args.virtual_stages > 1 and args.layers % (args.pp * args.virtual_stages):
        errs.append("interleaving needs layers divisible by pp * virtual-stages")
    return errs


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--layers", type=int, default=96)
    ap.add_argument("--hidden", type=int, default=12288)
    ap.add_argument("--heads", type=int, default=96)
    ap.add_argument("--seq", type=int, default=2048)
    ap.add_argument("--vocab", type=int, default=51200)
    ap.add_argument("--ffn", default="4h", help="MLP width: a number, or a multiple of h like 4h")
    ap.add_argument("--micro-batch", type=int, default=1)
    ap.add_argument("--dp", type=int, default=1)
    ap.add_argument("--tp", type=int, default=1)
    ap.add_argument("--pp", type=int, default=1)
    ap.add_argument("--virtual-stages", type=int, default=1,
                    help="interleaved schedule: model chunks per pipeline rank")
    ap.add_argument("--dtype", choices=sorted(DTYPE_BYTES), default="bf16")
    ap.add_argument("--untied", action="store_true", help="separate LM-head weight instead of the tied embedding")
    ap.add_argument("--separate-qkv", action="store_true",
                    help="three [h, h] Q/K/V projections instead of one fused [h, 3h] + loom.slice")
    ap.add_argument("--qkv-layout", choices=["megatron", "gpt2"], default="megatron",
                    help="fused QKV as Megatron stores it (interleaved per head) or as "
                         "GPT-2 does (q, k, v one after another); --tp's column split "
                         "of the gpt2 layout does not follow the heads")
    ap.add_argument("--causal-mask", action="store_true", help="emit the causal mask as loom.where")
    ap.add_argument("--no-plan", action="store_true",
                    help="no grid, shard ops or loom.stage: unplanned input for --loom-plan "
                         "(batch still micro-batch * dp; --tp/--pp/--virtual-stages place nothing)")
    ap.add_argument("--weights-file", default="gpt.bin")
    ap.add_argument("--stats", action="store_true", help="print parameter count and formula FLOPs to stderr")
    ap.add_argument("--json-stats", action="store_true", help="print the stats as JSON to stderr")
    ap.add_argument("-o", "--output", default="-")
    args = ap.parse_args(argv)
    errs = check(args)
    if errs:
        for e in errs:
            print("gpt_plan.py: error: " + e, file=sys.stderr)
        return 2
    t0 = time.time()
    em = Emitter(args)
    text = em.build()
    if args.output == "-":
        sys.stdout.write(text)
    else:
        with open(args.output, "w") as f:
            f.write(text)
    gen_s = time.time() - t0
    if args.stats or args.json_stats:
        ffn = parse_ffn(args.ffn, args.hidden)
        mb = args.micro_batch * args.dp
        st = {"parameters": em.params, "weight_bytes": em.offset,
              "parameters_formula_eq2": megatron_P(args.layers, args.hidden, args.seq, args.vocab),
              "ir_batch": mb, "ffn": ffn, "generate_s": round(gen_s, 3)}
        for k, v in formula_numbers(args.layers, args.hidden, args.seq, args.vocab, ffn, mb).items():
            st[k + "_per_microbatch"] = v
        if ffn == 4 * args.hidden:
            st["megatron_F_per_microbatch"] = megatron_F(mb, args.seq, args.layers, args.hidden, args.vocab)
        if args.json_stats:
            import json
            print(json.dumps(st, sort_keys=True), file=sys.stderr)
        else:
            print("parameters: %d (tied embedding counted once; eq. (2) of Narayanan et al.: %.0f)"
                  % (st["parameters"], st["parameters_formula_eq2"]), file=sys.stderr)
            print("weight bytes: %d" % st["weight_bytes"], file=sys.stderr)
            print("IR batch (micro-batch * dp): %d" % mb, file=sys.stderr)
            print("forward FLOPs per micro-batch step (GEMMs, 2 per MAC): %d" % st["forward_flops_per_microbatch"],
                  file=sys.stderr)
            print("training FLOPs per micro-batch step, no recompute (3x forward): %d"
                  % st["train_flops_no_recompute_per_microbatch"], file=sys.stderr)
            print("training FLOPs per micro-batch step, full recompute: %d"
                  % st["train_flops_full_recompute_per_microbatch"], file=sys.stderr)
            if "megatron_F_per_microbatch" in st:
                print("Megatron eq. (3) F for this batch: %.6e" % st["megatron_F_per_microbatch"], file=sys.stderr)
            print("generated in %.2f s" % gen_s, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
