#!/usr/bin/env python3
# test/Translate/ONNX/Inputs/make_onnx.py - writes the small ONNX models of the importer tests.
"""Usage: make_onnx.py CASE OUT.onnx

Writes the model named CASE to OUT.onnx (plus any side files next to it, such as external
weights) with onnx.helper, so that lit tests need no binary inputs. Some cases print facts the
test checks against, one `KEY=VALUE` per line (e.g. the byte offset of an embedded tensor).
`make_onnx.py --list` prints the case names.
"""

import os
import sys

import numpy as np
import onnx
import onnx.numpy_helper as nh
from onnx import TensorProto as T
from onnx import helper as h

CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


def model(nodes, inputs, outputs, inits=(), opset=17, name="g", extra_opsets=()):
    g = h.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    ops = [h.make_opsetid("", opset)] + [h.make_opsetid(d, v) for d, v in extra_opsets]
    m = h.make_model(g, opset_imports=ops, producer_name="loom-test")
    m.ir_version = 8
    return m


def vi(name, dtype, shape):
    return h.make_tensor_value_info(name, dtype, shape)


def f32(name, shape):
    return vi(name, T.FLOAT, shape)


def arr(name, a):
    return nh.from_array(np.asarray(a), name)


def i64(name, values, shape=None):
    values = list(values)
    return h.make_tensor(name, T.INT64, [len(values)] if shape is None else shape, values)


def rand(name, *shape, seed=0):
    return arr(name, np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


# --- elementwise -------------------------------------------------------------------------

@case
def elementwise(out):
    nodes = [h.make_node("Add", ["x", "b"], ["s"], name="add"),
             h.make_node("Mul", ["s", "y"], ["m"], name="mul"),
             h.make_node("Relu", ["m"], ["r"], name="relu"),
             h.make_node("Less", ["r", "y"], ["lt"], name="less"),
             h.make_node("Where", ["lt", "r", "x"], ["w"], name="where"),
             h.make_node("Clip", ["w", "lo", "hi"], ["c"], name="clip"),
             h.make_node("Cast", ["c"], ["z"], name="cast", to=T.FLOAT16),
             h.make_node("Sigmoid", ["x"], ["sg"], name="sigmoid"),
             h.make_node("LeakyRelu", ["x"], ["lr"], name="leaky", alpha=0.1)]
    inits = [arr("b", np.ones(4, np.float32)), arr("lo", np.float32(0.0)),
             arr("hi", np.float32(6.0))]
    return model(nodes, [f32("x", [2, 3, 4]), f32("y", [3, 1])],
                 [vi("z", T.FLOAT16, [2, 3, 4]), f32("sg", [2, 3, 4]), f32("lr", [2, 3, 4])], inits)


@case
def folding_arith(out):
    # Every input of the arithmetic is a Constant: it folds into one constant.
    # The float initializer `p` is a model parameter: it stays a weight and
    # is not folded, even though it is small.
    nodes = [h.make_node("Constant", [], ["a"], value=arr("av", np.array([1, 2], np.float32))),
             h.make_node("Constant", [], ["b"], value=arr("bv", np.array([3, 6], np.float32))),
             h.make_node("Add", ["a", "b"], ["s"]),
             h.make_node("Mul", ["s", "b"], ["m"]),
             h.make_node("Sqrt", ["m"], ["r"]),
             h.make_node("Add", ["x", "r"], ["y0"], name="use"),
             h.make_node("Mul", ["p", "two"], ["p2"], name="scale_param"),
             h.make_node("Add", ["y0", "p2"], ["y"], name="use_param")]
    inits = [arr("p", np.array([0.5, 0.25], np.float32)), arr("two", np.float32(2.0))]
    return model(nodes, [f32("x", [2])], [f32("y", [2])], inits)


# --- contractions ----------------------------------------------------------------------------

@case
def gemm(out):
    nodes = [h.make_node("Gemm", ["a", "w", "c"], ["y"], name="gemm", alpha=0.5, beta=2.0,
                         transB=1)]
    return model(nodes, [f32("a", [4, 8])], [f32("y", [4, 70])],
                 [rand("w", 70, 8), rand("c", 70, seed=1)])


@case
def matmul_1d(out):
    nodes = [h.make_node("MatMul", ["v", "m"], ["y"], name="vm"),
             h.make_node("MatMul", ["m2", "v2"], ["z"], name="mv")]
    return model(nodes, [f32("v", [3]), f32("m", [2, 3, 5]), f32("m2", [4, 3]),
                         f32("v2", [3])], [f32("y", [2, 5]), f32("z", [4])])


@case
def einsum(out):
    nodes = [h.make_node("Einsum", ["q", "k"], ["s"], name="scores",
                         equation="bhqd,bhkd->bhqk"),
             h.make_node("Einsum", ["a", "b"], ["c"], name="bmm", equation="bij,bjk->bik"),
             h.make_node("Einsum", ["a"], ["t"], name="transpose", equation="bij->bji")]
    return model(nodes, [f32("q", [2, 4, 8, 16]), f32("k", [2, 4, 6, 16]),
                         f32("a", [3, 5, 7]), f32("b", [3, 7, 2])],
                 [f32("s", [2, 4, 8, 6]), f32("c", [3, 5, 2]), f32("t", [3, 7, 5])])


@case
def einsum_trace(out):
    nodes = [h.make_node("Einsum", ["a"], ["t"], name="diag", equation="ii->i")]
    return model(nodes, [f32("a", [3, 3])], [f32("t", [3])])


# --- conv and pooling ------------------------------------------------------------------------

@case
def conv_pool(out):
    nodes = [h.make_node("Conv", ["x", "w", "wb"], ["c"], name="conv", auto_pad="SAME_UPPER",
                         strides=[2, 2], kernel_shape=[3, 3]),
             h.make_node("BatchNormalization", ["c", "g", "bb", "mean", "var"], ["bn"],
                         name="bn", epsilon=1e-3),
             h.make_node("MaxPool", ["bn"], ["mp"], name="maxpool", kernel_shape=[3, 3],
                         strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1),
             h.make_node("AveragePool", ["mp"], ["ap"], name="avgpool", kernel_shape=[2, 2],
                         count_include_pad=1, pads=[0, 0, 1, 1]),
             h.make_node("GlobalAveragePool", ["ap"], ["gap"], name="gap")]
    c = 80
    inits = [rand("w", c, 3, 3, 3), rand("wb", c, seed=1),
             arr("g", np.ones(c, np.float32)), arr("bb", np.zeros(c, np.float32)),
             arr("mean", np.zeros(c, np.float32)), arr("var", np.ones(c, np.float32))]
    return model(nodes, [f32("x", [1, 3, 15, 15])], [f32("gap", [1, c, 1, 1])], inits)


# --- shapes ----------------------------------------------------------------------------------

@case
def shape_subgraph(out):
    # torch.onnx's `x.view(x.size(0), -1)`: Shape -> Gather -> Unsqueeze -> Concat -> Reshape.
    nodes = [h.make_node("Shape", ["x"], ["shape"], name="shape"),
             h.make_node("Gather", ["shape", "zero"], ["batch"], name="gather", axis=0),
             h.make_node("Unsqueeze", ["batch", "axes0"], ["batch1"], name="unsqueeze"),
             h.make_node("Concat", ["batch1", "minus1"], ["target"], name="concat", axis=0),
             h.make_node("Reshape", ["x", "target"], ["y"], name="reshape")]
    inits = [i64("zero", [0], []), i64("axes0", [0]), i64("minus1", [-1])]
    return model(nodes, [f32("x", ["batch", 3, 4, 5])], [f32("y", ["batch", 60])], inits)


@case
def shape_ops(out):
    nodes = [h.make_node("Slice", ["x", "starts", "ends", "axes", "steps"], ["s"], name="slice"),
             h.make_node("Split", ["x", "split"], ["p0", "p1"], name="split", axis=1),
             h.make_node("Transpose", ["p1"], ["t"], name="transpose", perm=[1, 0, 2]),
             h.make_node("Pad", ["x", "pads", "pv"], ["pd"], name="pad", mode="constant"),
             h.make_node("Expand", ["e", "eshape"], ["ex"], name="expand"),
             h.make_node("Flatten", ["x"], ["fl"], name="flatten", axis=-1),
             h.make_node("Squeeze", ["u", "sqaxes"], ["sq"], name="squeeze"),
             h.make_node("Tile", ["e", "reps"], ["tl"], name="tile")]
    inits = [i64("starts", [-1, 0]), i64("ends", [-9223372036854775807, 100]),
             i64("axes", [2, 1]), i64("steps", [-2, 3]),
             i64("split", [2, 4]), i64("pads", [0, 1, 0, 0, 2, 0]),
             arr("pv", np.float32(1.5)), i64("eshape", [2, 1, 4]),
             i64("sqaxes", [-1]), i64("reps", [2, 3])]
    return model(nodes, [f32("x", [2, 6, 5]), f32("e", [3, 1]), f32("u", [4, 1])],
                 [f32("s", [2, 2, 3]), f32("p0", [2, 2, 5]), f32("t", [4, 2, 5]),
                  f32("pd", [2, 9, 5]), f32("ex", [2, 3, 4]), f32("fl", [12, 5]),
                  f32("sq", [4]), f32("tl", [6, 3])], inits)


@case
def gather_embedding(out):
    nodes = [h.make_node("Gather", ["table", "ids"], ["e"], name="embed"),
             h.make_node("Gather", ["x", "idx"], ["g"], name="gather", axis=1)]
    return model(nodes, [vi("ids", T.INT64, [2, 5]), f32("x", [3, 4])],
                 [f32("e", [2, 5, 16]), f32("g", [3, 2])],
                 [rand("table", 100, 16), arr("idx", np.array([3, -1], np.int64))])


@case
def varint_weight(out):
    # int64_data is stored as varints: no byte image to reference.
    nodes = [h.make_node("Gather", ["x", "idx"], ["g"], name="gather")]
    return model(nodes, [f32("x", [100])], [f32("g", [100])],
                 [i64("idx", [i % 7 for i in range(100)])])


# --- reductions across opsets ----------------------------------------------------------------

@case
def reduce_opset13(out):
    nodes = [h.make_node("ReduceMean", ["x"], ["m"], name="mean", axes=[-1], keepdims=1),
             h.make_node("ReduceSum", ["x", "axes"], ["s"], name="sum", keepdims=0)]
    return model(nodes, [f32("x", [2, 3, 4])], [f32("m", [2, 3, 1]), f32("s", [3])],
                 [i64("axes", [0, 2])], opset=13)


@case
def reduce_opset18(out):
    nodes = [h.make_node("ReduceMean", ["x", "axes1"], ["m"], name="mean", keepdims=1),
             h.make_node("ReduceMax", ["x"], ["all"], name="max", keepdims=0),
             h.make_node("ReduceSum", ["x", "empty"], ["same"], name="noop",
                         noop_with_empty_axes=1)]
    return model(nodes, [f32("x", [2, 3, 4])],
                 [f32("m", [2, 3, 1]), f32("all", []), f32("same", [2, 3, 4])],
                 [i64("axes1", [-1]), i64("empty", [])], opset=18)


@case
def reduce_opset18_attr(out):
    # At opset 18 ReduceMean's axes is an input; the old attribute is not read.
    nodes = [h.make_node("ReduceMean", ["x"], ["m"], name="mean", axes=[1])]
    return model(nodes, [f32("x", [2, 3])], [f32("m", None)], opset=18)


# --- control flow and sequences --------------------------------------------------------------

@case
def loop_unroll(out):
    # for i in range(3): acc = acc + x * i; scan out acc
    body = h.make_graph(
        [h.make_node("Cast", ["i"], ["fi"], to=T.FLOAT),
         h.make_node("Mul", ["x", "fi"], ["xi"], name="scale"),
         h.make_node("Add", ["acc_in", "xi"], ["acc_out"], name="accumulate"),
         h.make_node("Identity", ["cond_in"], ["cond_out"])],
        "body",
        [vi("i", T.INT64, []), vi("cond_in", T.BOOL, []), f32("acc_in", [2])],
        [vi("cond_out", T.BOOL, []), f32("acc_out", [2]), f32("acc_out", [2])])
    nodes = [h.make_node("Constant", [], ["zero"], value=arr("z", np.zeros(2, np.float32))),
             h.make_node("Loop", ["trip", "cond", "zero"], ["acc", "stack"], name="loop",
                         body=body)]
    inits = [i64("trip", [3], []), h.make_tensor("cond", T.BOOL, [], [True])]
    return model(nodes, [f32("x", [2])], [f32("acc", [2]), f32("stack", [3, 2])], inits)


@case
def sequence_ops(out):
    nodes = [h.make_node("SplitToSequence", ["x"], ["seq"], name="split", axis=0, keepdims=0),
             h.make_node("SequenceAt", ["seq", "one"], ["row"], name="at"),
             h.make_node("ConcatFromSequence", ["seq"], ["y"], name="concat", axis=1,
                         new_axis=1),
             h.make_node("If", ["flag"], ["z"], name="if",
                         then_branch=h.make_graph([h.make_node("Neg", ["row"], ["n"])], "then",
                                                  [], [f32("n", [4])]),
                         else_branch=h.make_graph([h.make_node("Abs", ["row"], ["a"])], "else",
                                                  [], [f32("a", [4])]))]
    inits = [i64("one", [1], []), h.make_tensor("flag", T.BOOL, [], [False])]
    return model(nodes, [f32("x", [3, 4])], [f32("y", [4, 3]), f32("z", [4])], inits)


# --- weights ---------------------------------------------------------------------------------

@case
def embedded_weight(out):
    w = np.arange(12 * 10, dtype=np.float32).reshape(12, 10)
    m = model([h.make_node("MatMul", ["x", "w"], ["y"], name="mm")],
              [f32("x", [2, 12])], [f32("y", [2, 10])], [arr("w", w)])
    data = m.SerializeToString()
    print(f"OFFSET={data.find(w.tobytes())}")
    return m


@case
def constant_node_weight(out):
    # A large Constant value is referenced like an initializer (role buffer).
    c = np.arange(100, dtype=np.float32).reshape(10, 10)
    nodes = [h.make_node("Constant", [], ["c"], name="table", value=arr("v", c)),
             h.make_node("MatMul", ["x", "c"], ["y"], name="mm")]
    m = model(nodes, [f32("x", [2, 10])], [f32("y", [2, 10])])
    print(f"OFFSET={m.SerializeToString().find(c.tobytes())}")
    return m


@case
def local_function(out):
    # A model-local function with an attribute reference, called twice.
    slope = h.AttributeProto()
    slope.name, slope.ref_attr_name, slope.type = "alpha", "slope", h.AttributeProto.FLOAT
    leaky = h.make_node("LeakyRelu", ["a"], ["r"])
    leaky.attribute.append(slope)
    fn = h.make_function("loom.test", "ScaledLeaky", ["a", "s"], ["o"],
                         [leaky, h.make_node("Mul", ["r", "s"], ["o"])],
                         [h.make_opsetid("", 17)], ["slope"])
    nodes = [h.make_node("ScaledLeaky", ["x", "two"], ["y"], name="first",
                         domain="loom.test", slope=0.5),
             h.make_node("ScaledLeaky", ["y", "two"], ["z"], name="second",
                         domain="loom.test")]
    m = model(nodes, [f32("x", [4])], [f32("z", [4])], [arr("two", np.float32(2.0))],
              extra_opsets=[("loom.test", 1)])
    m.functions.append(fn)
    return m


@case
def external_weight(out):
    w = np.ones((16, 8), np.float32)
    base = os.path.splitext(os.path.basename(out))[0] + ".bin"
    t = arr("w", w)
    t.ClearField("raw_data")
    t.data_location = T.EXTERNAL
    for k, v in (("location", base), ("offset", "64"), ("length", str(w.nbytes))):
        e = t.external_data.add()
        e.key, e.value = k, v
    with open(os.path.join(os.path.dirname(out) or ".", base), "wb") as f:
        f.write(b"\0" * 64 + w.tobytes())
    print(f"FILE={base}")
    return model([h.make_node("MatMul", ["x", "w"], ["y"], name="mm")],
                 [f32("x", [2, 16])], [f32("y", [2, 8])], [t])


@case
def external_missing(out):
    m = external_weight(out)
    os.remove(os.path.join(os.path.dirname(out) or ".",
                           os.path.splitext(os.path.basename(out))[0] + ".bin"))
    return m


@case
def external_short(out):
    m = external_weight(out)
    path = os.path.join(os.path.dirname(out) or ".",
                        os.path.splitext(os.path.basename(out))[0] + ".bin")
    with open(path, "r+b") as f:
        f.truncate(100)
    return m


# --- errors ----------------------------------------------------------------------------------

@case
def unsupported_op(out):
    return model([h.make_node("Relu", ["x"], ["r"], name="act"),
                  h.make_node("Reluu", ["r"], ["y"], name="typo")],
                 [f32("x", [2])], [f32("y", [2])])


@case
def resize(out):
    return model([h.make_node("Resize", ["x", "", "scales"], ["y"], name="up")],
                 [f32("x", [1, 1, 2, 2])], [f32("y", [1, 1, 4, 4])],
                 [arr("scales", np.array([1, 1, 2, 2], np.float32))])


@case
def dangling(out):
    return model([h.make_node("Add", ["x", "nowhere"], ["y"], name="add")],
                 [f32("x", [2])], [f32("y", [2])])


@case
def cycle(out):
    return model([h.make_node("Neg", ["b"], ["a"], name="first"),
                  h.make_node("Abs", ["a"], ["b"], name="second")],
                 [f32("x", [2])], [f32("b", [2])])


@case
def dynamic_dim(out):
    return model([h.make_node("Relu", ["x"], ["y"], name="relu")],
                 [f32("x", ["batch", 8])], [f32("y", ["batch", 8])])


@case
def old_opset(out):
    return model([h.make_node("Relu", ["x"], ["y"])], [f32("x", [2])], [f32("y", [2])],
                 opset=11)


@case
def truncated(out):
    m = embedded_weight(out)
    data = m.SerializeToString()
    with open(out, "wb") as f:
        f.write(data[: len(data) // 2])
    return None


@case
def shape_mismatch(out):
    return model([h.make_node("MatMul", ["a", "b"], ["y"], name="mm")],
                 [f32("a", [2, 3]), f32("b", [4, 5])], [f32("y", [2, 5])])


@case
def runtime_shape(out):
    return model([h.make_node("Reshape", ["x", "s"], ["y"], name="reshape")],
                 [f32("x", [2, 3]), vi("s", T.INT64, [2])], [f32("y", None)])


def main():
    if len(sys.argv) == 2 and sys.argv[1] == "--list":
        print("\n".join(sorted(CASES)))
        return 0
    if len(sys.argv) != 3 or sys.argv[1] not in CASES:
        sys.exit(__doc__ + "\ncases: " + " ".join(sorted(CASES)))
    out = sys.argv[2]
    m = CASES[sys.argv[1]](out)
    if m is not None:
        with open(out, "wb") as f:
            f.write(m.SerializeToString())
    return 0


if __name__ == "__main__":
    sys.exit(main())
