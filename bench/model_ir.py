#!/usr/bin/python3
"""Write unplanned loom MLIR for model families beyond the dense GPT.

Inputs for the strategy search (`loom-opt --loom-plan`) and its tests: no
`shard.grid`, no `shard.shard`, no `loom.stage`. Weights are `loom.weight`
ops at increasing byte offsets of one file (nothing is written there). Dim 0
of the first function argument is the batch, as the estimator expects.

* `--kind mlp`: a residual MLP chain on `x[batch, hidden]`: per layer
  `x = x + gelu(x @ W + b)` with W [hidden, hidden]; the smallest input with
  repeated blocks.
* `--kind moe`: a pre-LN GPT-style decoder whose MLP is a mixture of experts
  in every `--moe-every`-th layer (layers i with i % N == N - 1; N = 1 makes
  every layer MoE, N = 2 is GShard's every other layer). Routing as GShard /
  Switch, grouped per sequence (G = batch groups of S = seq tokens): router
  matmul [G, S, H] x [H, E] -> softmax -> `loom.topk` -> renormalized gates;
  `loom.moe_dispatch` to [G, E, C, H] with capacity per group
  C = ceil(capacity-factor * S * K / E); experts as batched matmuls
  [G, E, C, H] x [E, H, F] -> gelu -> [G, E, C, F] x [E, F, H] (no expert
  biases); `loom.moe_combine` with the gates; residual add.
* `--kind encdec`: a pre-LN encoder-decoder transformer (T5/BART-like, learned
  absolute positions, no relative bias): two inputs (source and target
  tokens), encoder layers (self-attention + MLP), decoder layers (causal
  self-attention, cross-attention over the final encoder output, MLP), shared
  embedding tied with the LM head. Not a chain: every decoder layer reads the
  encoder output.
* `--kind resnet`: torchvision's ResNet (v1.5: the stride of a downsampling
  bottleneck is on its 3x3 conv): conv/batch_norm/relu, max pool, bottleneck
  (depth >= 50) or basic blocks, projection shortcut on each stage's first
  block, global average pool, fc. `--depth 50` is ResNet-50, 25,557,032
  parameters and 4.09 GMACs per 224x224 image; batch-norm running statistics
  are buffers.

Attention is `loom.attention` by default (`--attention fused`) or, as in
bench/gpt_plan.py, matmul / scale / softmax / matmul (`--attention
decomposed`, the causal mask then a `loom.where` on an i1 buffer). Dropout is
omitted. Standard library only; `--stats` prints parameter and buffer counts.
"""

import argparse
import math
import sys

DTYPE_BYTES = {"f32": 4, "f16": 2, "bf16": 2, "i1": 1, "i64": 8}


def tensor(shape, dt):
    if not shape:
        return "tensor<%s>" % dt
    return "tensor<%sx%s>" % ("x".join(str(d) for d in shape), dt)


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def i64s(values):
    return "array<i64: %s>" % ", ".join(str(v) for v in values)


class Emitter:
    """Straight-line SSA emission with weights at increasing offsets."""

    def __init__(self, args):
        self.a = args
        self.dt = args.dtype
        self.lines = []
        self.n = 0
        self.offset = 0
        self.params = 0
        self.param_tensors = 0
        self.buffers = 0
        self.buffer_tensors = 0
        self.consts = {}

    def fresh(self, hint="v"):
        self.n += 1
        return "%%%s%d" % (hint, self.n)

    def emit(self, text):
        self.lines.append("  " + text)

    def weight(self, name, shape, role="parameter", dt=None):
        dt = dt or self.dt
        v = self.fresh("w")
        self.emit('%s = loom.weight %s "%s" from "%s"[%d] : %s' % (
            v, role, name, self.a.weights_file, self.offset, tensor(shape, dt)))
        self.offset += numel(shape) * DTYPE_BYTES[dt]
        if role == "parameter":
            self.params += numel(shape)
            self.param_tensors += 1
        else:
            self.buffers += numel(shape)
            self.buffer_tensors += 1
        return v

    def op(self, text, types, attrs="", hint="v"):
        v = self.fresh(hint)
        self.emit("%s = %s%s : %s" % (v, text, (" {%s}" % attrs) if attrs else "", types))
        return v

    def const(self, value, dt=None):
        dt = dt or self.dt
        key = (repr(value), dt)
        if key not in self.consts:
            self.consts[key] = self.op("loom.constant dense<%s>" % repr(value), tensor([], dt), hint="c")
        return self.consts[key]

    # -- generic layers ------------------------------------------------------

    def binary(self, kind, x, y, xs, ys):
        return self.op("loom.binary %s %s, %s" % (kind, x, y), "%s, %s" % (tensor(xs, self.dt), tensor(ys, self.dt)))

    def unary(self, kind, x, xs):
        return self.op("loom.unary %s %s" % (kind, x), tensor(xs, self.dt))

    def reshape(self, x, src, dst, dt=None):
        dt = dt or self.dt
        return self.op("loom.reshape %s" % x, "%s -> %s" % (tensor(src, dt), tensor(dst, dt)))

    def transpose(self, x, shape, perm):
        v = self.op("loom.transpose %s" % x, tensor(shape, self.dt), attrs="permutation = %s" % i64s(perm))
        return v, [shape[p] for p in perm]

    def matmul(self, x, w, xs, ws):
        return self.op("loom.matmul %s, %s" % (x, w), "%s, %s" % (tensor(xs, self.dt), tensor(ws, self.dt)))

    def layer_norm(self, x, shape, prefix):
        h = shape[-1]
        g = self.weight(prefix + ".weight", [h])
        b = self.weight(prefix + ".bias", [h])
        return self.op("loom.layer_norm %s scale %s bias %s" % (x, g, b),
                       "%s, %s, %s" % (tensor(shape, self.dt), tensor([h], self.dt), tensor([h], self.dt)),
                       attrs="axis = %d : i64, epsilon = 1.000000e-05 : f64" % (len(shape) - 1))

    def linear(self, x, in_shape, n_out, prefix, bias=True):
        k = in_shape[-1]
        out_shape = in_shape[:-1] + [n_out]
        w = self.weight(prefix + ".weight", [k, n_out])
        y = self.matmul(x, w, in_shape, [k, n_out])
        if bias:
            b = self.weight(prefix + ".bias", [n_out])
            y = self.binary("add", y, b, out_shape, [n_out])
        return y, out_shape


class Transformer(Emitter):
    """Pieces shared by the MoE decoder and the encoder-decoder."""

    def heads(self, x, S):
        """[B, S, H] -> [B, nh, S, d]."""
        a = self.a
        B, H, nh = a.batch, a.hidden, a.heads
        d = H // nh
        t = self.reshape(x, [B, S, H], [B, S, nh, d])
        t, _ = self.transpose(t, [B, S, nh, d], [0, 2, 1, 3])
        return t

    def attention(self, xq, Sq, xkv, Skv, prefix, causal):
        """Multi-head attention with separate q/k/v/out projections."""
        a = self.a
        B, H, nh = a.batch, a.hidden, a.heads
        d = H // nh
        q, _ = self.linear(xq, [B, Sq, H], H, prefix + ".q")
        k, _ = self.linear(xkv, [B, Skv, H], H, prefix + ".k")
        v, _ = self.linear(xkv, [B, Skv, H], H, prefix + ".v")
        q, k, v = self.heads(q, Sq), self.heads(k, Skv), self.heads(v, Skv)
        qs, ks = [B, nh, Sq, d], [B, nh, Skv, d]
        if a.attention == "fused":
            ctx = self.op("loom.attention %s, %s, %s" % (q, k, v),
                          "%s, %s, %s" % (tensor(qs, self.dt), tensor(ks, self.dt), tensor(ks, self.dt)),
                          attrs="causal" if causal else "")
        else:
            kt, _ = self.transpose(k, ks, [0, 1, 3, 2])
            ss = [B, nh, Sq, Skv]
            s = self.matmul(q, kt, qs, [B, nh, d, Skv])
            s = self.binary("mul", s, self.const(1.0 / math.sqrt(d)), ss, [])
            if causal:
                s = self.op("loom.where %s, %s, %s" % (self.causal_mask(Sq), s, self.const(-1.0e4)),
                            "%s, %s, %s" % (tensor([Sq, Skv], "i1"), tensor(ss, self.dt), tensor([], self.dt)))
            p = self.op("loom.softmax %s" % s, tensor(ss, self.dt), attrs="axis = 3 : i64")
            ctx = self.matmul(p, v, ss, ks)
        ctx, _ = self.transpose(ctx, qs, [0, 2, 1, 3])
        ctx = self.reshape(ctx, [B, Sq, nh, d], [B, Sq, H])
        out, _ = self.linear(ctx, [B, Sq, H], H, prefix + ".o")
        return out

    def causal_mask(self, S):
        if not hasattr(self, "_masks"):
            self._masks = {}
        if S not in self._masks:
            self._masks[S] = self.weight("causal_mask_%d" % S, [S, S], role="buffer", dt="i1")
        return self._masks[S]

    def mlp(self, x, xs, prefix):
        h, hs = self.linear(x, xs, self.ffn, prefix + ".fc1")
        h = self.unary("gelu", h, hs)
        y, _ = self.linear(h, hs, xs[-1], prefix + ".fc2")
        return y

    def embed(self, ids, S, wte, pos_name):
        a = self.a
        B, H = a.batch, a.hidden
        wpe = self.weight(pos_name, [S, H])
        x = self.op("loom.embedding %s, %s" % (wte, ids),
                    "%s, %s" % (tensor([a.vocab, H], self.dt), tensor([B, S], "i64")))
        return self.binary("add", x, wpe, [B, S, H], [S, H])

    def lm_head(self, x, xs, wte):
        a = self.a
        head, _ = self.transpose(wte, [a.vocab, a.hidden], [1, 0])
        return self.matmul(x, head, xs, [a.hidden, a.vocab])


class MLP(Emitter):
    def build(self):
        a = self.a
        xs = [a.batch, a.hidden]
        hdr = ["// Residual MLP: layers=%d hidden=%d batch=%d dtype=%s" % (a.layers, a.hidden, a.batch, self.dt)]
        x = "%x"
        for i in range(a.layers):
            h, _ = self.linear(x, xs, a.hidden, "layers.%d" % i)
            h = self.unary("gelu", h, xs)
            x = self.binary("add", x, h, xs, xs)
        sig = "func.func @main(%%x: %s) -> %s {" % (tensor(xs, self.dt), tensor(xs, self.dt))
        self.emit("return %s : %s" % (x, tensor(xs, self.dt)))
        return hdr, sig


def command_line(argv):
    """The generating command without its output path."""
    out, skip = [], False
    for t in argv:
        if skip:
            skip = False
        elif t in ("-o", "--output"):
            skip = True
        elif not (t.startswith("--output=") or (t.startswith("-o") and len(t) > 2)):
            out.append(t)
    return " ".join(["bench/model_ir.py"] + out)


class MoE(Transformer):
    def moe_mlp(self, x, xs, prefix):
        # GShard's grouped routing: each sequence is a group that fills its
        # own capacity slots, so a group split (data parallelism) moves to an
        # expert split (expert parallelism) with one all-to-all.
        a = self.a
        B, S, H = xs
        E, K, F = a.experts, a.top_k, self.ffn
        C = self.capacity
        wr = self.weight(prefix + ".router.weight", [H, E])
        logits = self.matmul(x, wr, [B, S, H], [H, E])
        probs = self.op("loom.softmax %s" % logits, tensor([B, S, E], self.dt), attrs="axis = 2 : i64")
        vals, idx = self.fresh("g"), self.fresh("i")
        self.emit("%s, %s = loom.topk %s {axis = 2 : i64, k = %d : i64} : %s" % (
            vals, idx, probs, K, tensor([B, S, E], self.dt)))
        gates = vals
        if K > 1:
            norm = self.op("loom.reduce sum %s" % vals, tensor([B, S, K], self.dt),
                           attrs="axes = array<i64: 2>, keep_dims = true")
            gates = self.binary("div", vals, norm, [B, S, K], [B, S, 1])
        disp = self.op("loom.moe_dispatch %s, %s" % (x, idx),
                       "%s, %s" % (tensor([B, S, H], self.dt), tensor([B, S, K], "i64")),
                       attrs="capacity = %d : i64, num_experts = %d : i64" % (C, E))
        w1 = self.weight(prefix + ".experts.fc1.weight", [E, H, F])
        h = self.matmul(disp, w1, [B, E, C, H], [E, H, F])
        h = self.unary("gelu", h, [B, E, C, F])
        w2 = self.weight(prefix + ".experts.fc2.weight", [E, F, H])
        eo = self.matmul(h, w2, [B, E, C, F], [E, F, H])
        return self.op("loom.moe_combine %s, %s, %s" % (eo, idx, gates),
                       "%s, %s, %s" % (tensor([B, E, C, H], self.dt), tensor([B, S, K], "i64"),
                                       tensor([B, S, K], self.dt)))

    def build(self):
        a = self.a
        B, S, H, V = a.batch, a.seq, a.hidden, a.vocab
        xs = [B, S, H]
        self.capacity = max(1, int(math.ceil(a.capacity_factor * S * a.top_k / a.experts)))
        moe_layers = [i for i in range(a.layers) if i % a.moe_every == a.moe_every - 1]
        hdr = ["// MoE decoder: layers=%d (MoE: %s) hidden=%d heads=%d ffn=%d seq=%d vocab=%d dtype=%s"
               % (a.layers, ",".join(str(i) for i in moe_layers) or "none", H, a.heads, self.ffn, S, V, self.dt),
               "// experts=%d top-k=%d capacity-factor=%g -> capacity %d per group of S=%d tokens; groups=batch=%d; attention=%s"
               % (a.experts, a.top_k, a.capacity_factor, self.capacity, S, B, a.attention)]
        wte = self.weight("embed.weight", [V, H])
        x = self.embed("%tokens", S, wte, "pos_embed.weight")
        for i in range(a.layers):
            p = "layers.%d" % i
            h = self.layer_norm(x, xs, p + ".ln1")
            h = self.attention(h, S, h, S, p + ".attn", causal=True)
            x = self.binary("add", x, h, xs, xs)
            h = self.layer_norm(x, xs, p + ".ln2")
            if i in moe_layers:
                h = self.moe_mlp(h, xs, p + ".moe")
            else:
                h = self.mlp(h, xs, p + ".mlp")
            x = self.binary("add", x, h, xs, xs)
        x = self.layer_norm(x, xs, "final_ln")
        logits = self.lm_head(x, xs, wte)
        sig = "func.func @main(%%tokens: %s) -> %s {" % (tensor([B, S], "i64"), tensor([B, S, V], self.dt))
        self.emit("return %s : %s" % (logits, tensor([B, S, V], self.dt)))
        return hdr, sig


class EncDec(Transformer):
    def build(self):
        a = self.a
        B, H, V = a.batch, a.hidden, a.vocab
        Ss, St = a.seq, a.tgt_seq or a.seq
        es, ds = [B, Ss, H], [B, St, H]
        hdr = ["// Encoder-decoder: encoder-layers=%d decoder-layers=%d hidden=%d heads=%d ffn=%d "
               "src-seq=%d tgt-seq=%d vocab=%d dtype=%s batch=%d attention=%s"
               % (a.enc_layers, a.dec_layers, H, a.heads, self.ffn, Ss, St, V, self.dt, B, a.attention)]
        wte = self.weight("shared.weight", [V, H])
        x = self.embed("%src", Ss, wte, "encoder.pos_embed.weight")
        for i in range(a.enc_layers):
            p = "encoder.layers.%d" % i
            h = self.layer_norm(x, es, p + ".ln1")
            h = self.attention(h, Ss, h, Ss, p + ".self_attn", causal=False)
            x = self.binary("add", x, h, es, es)
            h = self.layer_norm(x, es, p + ".ln2")
            x = self.binary("add", x, self.mlp(h, es, p + ".mlp"), es, es)
        enc = self.layer_norm(x, es, "encoder.final_ln")
        y = self.embed("%tgt", St, wte, "decoder.pos_embed.weight")
        for i in range(a.dec_layers):
            p = "decoder.layers.%d" % i
            h = self.layer_norm(y, ds, p + ".ln1")
            h = self.attention(h, St, h, St, p + ".self_attn", causal=True)
            y = self.binary("add", y, h, ds, ds)
            h = self.layer_norm(y, ds, p + ".ln2")
            h = self.attention(h, St, enc, Ss, p + ".cross_attn", causal=False)
            y = self.binary("add", y, h, ds, ds)
            h = self.layer_norm(y, ds, p + ".ln3")
            y = self.binary("add", y, self.mlp(h, ds, p + ".mlp"), ds, ds)
        y = self.layer_norm(y, ds, "decoder.final_ln")
        logits = self.lm_head(y, ds, wte)
        sig = "func.func @main(%%src: %s, %%tgt: %s) -> %s {" % (
            tensor([B, Ss], "i64"), tensor([B, St], "i64"), tensor([B, St, V], self.dt))
        self.emit("return %s : %s" % (logits, tensor([B, St, V], self.dt)))
        return hdr, sig


RESNET_BLOCKS = {18: (False, [2, 2, 2, 2]), 34: (False, [3, 4, 6, 3]), 50: (True, [3, 4, 6, 3]),
                 101: (True, [3, 4, 23, 3]), 152: (True, [3, 8, 36, 3])}


class ResNet(Emitter):
    def conv(self, x, xs, cout, k, stride, pad, name):
        cin = xs[1]
        w = self.weight(name + ".weight", [cout, cin, k, k])
        ho = (xs[2] + 2 * pad - k) // stride + 1
        wo = (xs[3] + 2 * pad - k) // stride + 1
        y = self.op("loom.conv %s, %s" % (x, w), "%s, %s" % (tensor(xs, self.dt), tensor([cout, cin, k, k], self.dt)),
                    attrs="dilations = array<i64: 1, 1>, groups = 1 : i64, padding = %s, strides = %s"
                          % (i64s([pad] * 4), i64s([stride] * 2)))
        return y, [xs[0], cout, ho, wo]

    def bn(self, x, xs, name):
        c = xs[1]
        g = self.weight(name + ".weight", [c])
        b = self.weight(name + ".bias", [c])
        m = self.weight(name + ".running_mean", [c], role="buffer")
        v = self.weight(name + ".running_var", [c], role="buffer")
        ct = tensor([c], self.dt)
        return self.op("loom.batch_norm %s, %s, %s, %s, %s" % (x, g, b, m, v),
                       "%s, %s, %s, %s, %s" % (tensor(xs, self.dt), ct, ct, ct, ct),
                       attrs="epsilon = 1.000000e-05 : f64")

    def conv_bn(self, x, xs, cout, k, stride, pad, conv_name, bn_name, relu=True):
        y, ys = self.conv(x, xs, cout, k, stride, pad, conv_name)
        y = self.bn(y, ys, bn_name)
        if relu:
            y = self.unary("relu", y, ys)
        return y, ys

    def block(self, x, xs, width, stride, bottleneck, name):
        expansion = 4 if bottleneck else 1
        cout = width * expansion
        if bottleneck:
            y, ys = self.conv_bn(x, xs, width, 1, 1, 0, name + ".conv1", name + ".bn1")
            y, ys = self.conv_bn(y, ys, width, 3, stride, 1, name + ".conv2", name + ".bn2")
            y, ys = self.conv_bn(y, ys, cout, 1, 1, 0, name + ".conv3", name + ".bn3", relu=False)
        else:
            y, ys = self.conv_bn(x, xs, width, 3, stride, 1, name + ".conv1", name + ".bn1")
            y, ys = self.conv_bn(y, ys, cout, 3, 1, 1, name + ".conv2", name + ".bn2", relu=False)
        if stride != 1 or xs[1] != cout:
            sc, _ = self.conv_bn(x, xs, cout, 1, stride, 0, name + ".downsample.0", name + ".downsample.1",
                                 relu=False)
        else:
            sc = x
        y = self.binary("add", y, sc, ys, ys)
        return self.unary("relu", y, ys), ys

    def build(self):
        a = self.a
        B, R = a.batch, a.image_size
        if a.blocks:
            bottleneck = a.depth >= 50
            counts = [int(c) for c in a.blocks.split(",")]
        else:
            bottleneck, counts = RESNET_BLOCKS[a.depth]
        hdr = ["// ResNet (v1.5, torchvision layout): depth=%d %s blocks=%s width=%d image=%dx%d classes=%d "
               "batch=%d dtype=%s" % (a.depth, "bottleneck" if bottleneck else "basic", counts, a.width,
                                      R, R, a.classes, B, self.dt)]
        xs = [B, 3, R, R]
        x, xs = self.conv_bn("%x", xs, a.width, 7, 2, 3, "conv1", "bn1")
        ps = [xs[0], xs[1], (xs[2] + 2 - 3) // 2 + 1, (xs[3] + 2 - 3) // 2 + 1]
        x = self.op("loom.pool max %s" % x, tensor(xs, self.dt),
                    attrs="dilations = array<i64: 1, 1>, kernel = array<i64: 3, 3>, "
                          "padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>")
        xs = ps
        for s, n in enumerate(counts):
            width = a.width * (2 ** s)
            for j in range(n):
                stride = 2 if (j == 0 and s > 0) else 1
                x, xs = self.block(x, xs, width, stride, bottleneck, "layer%d.%d" % (s + 1, j))
        x = self.op("loom.reduce mean %s" % x, tensor(xs, self.dt), attrs="axes = array<i64: 2, 3>, keep_dims = false")
        logits, _ = self.linear(x, [B, xs[1]], a.classes, "fc")
        sig = "func.func @main(%%x: %s) -> %s {" % (tensor([B, 3, R, R], self.dt), tensor([B, a.classes], self.dt))
        self.emit("return %s : %s" % (logits, tensor([B, a.classes], self.dt)))
        return hdr, sig


def parse_ffn(text, hidden):
    t = text.strip().lower()
    if t.endswith("h"):
        return int(float(t[:-1] or "1") * hidden)
    return int(t)


def check(a):
    errs = []
    if a.kind in ("moe", "encdec"):
        if a.hidden % a.heads:
            errs.append("--hidden must be a multiple of --heads")
    if a.kind == "moe":
        if not 1 <= a.top_k <= a.experts:
            errs.append("--top-k must be between 1 and --experts")
        if a.moe_every < 1:
            errs.append("--moe-every must be at least 1")
    if a.kind == "resnet":
        if a.depth not in RESNET_BLOCKS and not a.blocks:
            errs.append("--depth must be one of %s (or give --blocks)" % sorted(RESNET_BLOCKS))
    if a.batch < 1:
        errs.append("--batch must be positive")
    return errs


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kind", choices=["mlp", "moe", "encdec", "resnet"], required=True)
    ap.add_argument("--batch", type=int, default=8, help="batch (dim 0 of the first input)")
    ap.add_argument("--dtype", choices=["f32", "f16", "bf16"], default="f32")
    ap.add_argument("--weights-file", default="model.bin")
    g = ap.add_argument_group("transformers (moe, encdec; mlp uses --layers and --hidden)")
    g.add_argument("--layers", type=int, default=4, help="moe: decoder layers; mlp: residual blocks")
    g.add_argument("--hidden", type=int, default=512)
    g.add_argument("--heads", type=int, default=8)
    g.add_argument("--ffn", default="4h", help="MLP / expert width: a number or a multiple of h like 4h")
    g.add_argument("--seq", type=int, default=128, help="sequence length (encdec: source)")
    g.add_argument("--vocab", type=int, default=32000)
    g.add_argument("--attention", choices=["fused", "decomposed"], default="fused")
    g = ap.add_argument_group("moe")
    g.add_argument("--experts", type=int, default=8)
    g.add_argument("--top-k", type=int, default=2)
    g.add_argument("--capacity-factor", type=float, default=1.25)
    g.add_argument("--moe-every", type=int, default=1, help="MoE MLP in layers i with i %% N == N-1")
    g = ap.add_argument_group("encdec")
    g.add_argument("--enc-layers", type=int, default=4)
    g.add_argument("--dec-layers", type=int, default=4)
    g.add_argument("--tgt-seq", type=int, default=0, help="target length (default: --seq)")
    g = ap.add_argument_group("resnet")
    g.add_argument("--depth", type=int, default=50, help="18, 34 (basic blocks), 50, 101, 152 (bottleneck)")
    g.add_argument("--blocks", default="", help="blocks per stage, e.g. 1,1,1,1 (overrides the depth's layout)")
    g.add_argument("--width", type=int, default=64, help="stem / first-stage width")
    g.add_argument("--image-size", type=int, default=224)
    g.add_argument("--classes", type=int, default=1000)
    ap.add_argument("--stats", action="store_true", help="print parameter and buffer counts to stderr")
    ap.add_argument("-o", "--output", default="-")
    a = ap.parse_args(argv)
    errs = check(a)
    if errs:
        for e in errs:
            print("model_ir.py: error: " + e, file=sys.stderr)
        return 2
    em = {"mlp": MLP, "moe": MoE, "encdec": EncDec, "resnet": ResNet}[a.kind](a)
    if a.kind in ("moe", "encdec"):
        em.ffn = parse_ffn(a.ffn, a.hidden)
    hdr, sig = em.build()
    cmd = command_line(sys.argv[1:] if argv is None else argv)
    text = "\n".join(["// Generated by: python3 %s" % cmd] + hdr +
                     ["// Unplanned: no grid, shard ops or loom.stage; dropout omitted.", sig] +
                     em.lines + ["}"]) + "\n"
    if a.output == "-":
        sys.stdout.write(text)
    else:
        with open(a.output, "w") as f:
            f.write(text)
    if a.stats:
        print("parameters: %d in %d tensors" % (em.params, em.param_tensors), file=sys.stderr)
        print("buffers: %d in %d tensors" % (em.buffers, em.buffer_tensors), file=sys.stderr)
        print("weight bytes: %d" % em.offset, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
