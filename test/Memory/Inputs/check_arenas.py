"""Checks a placed module's static memory plan from the IR alone (generic
form, read from stdin): every offset the placement wrote lies inside its
tier's arena (loom.memory_plan's `arenas`), and the buffers that live
throughout the step (each weight's parameter home copy, host copy, gradient
and optimizer state) share no byte in any tier, nor with the streamed
chunks' device copies (`loom.fetch ... at`) or the activations and their
gradients (`loom.offsets`). Sizes come from the IR's types (precision=ir); Adam's
state is STATE_BYTES per parameter (8 for f32: two moments).
Prints one summary line per tier."""
import re
import sys

STATE_BYTES = 8
ELEMENT_BYTES = {"f32": 4, "f16": 2, "bf16": 2, "i64": 8, "i32": 4, "f64": 8}

text = sys.stdin.read()


def tensor_bytes(t):
    m = re.fullmatch(r"tensor<((?:\d+x)*)(\w+)>", t.strip())
    assert m, t
    n = 1
    for d in m.group(1).split("x")[:-1]:
        n *= int(d)
    return n * ELEMENT_BYTES[m.group(2)]


def ints(s):
    return [int(x) for x in s.split(",")] if s.strip() else []


def result_types(line):
    tail = line.rsplit("->", 1)[1].strip()
    if tail.startswith("("):
        tail = tail[1:-1]
    return [t for t in re.findall(r"tensor<[^>]*>", tail)]


start = text.find("arenas = {")
assert start >= 0, "no arenas in loom.memory_plan"
depth, end = 0, start + len("arenas = ")
for end in range(end, len(text)):  # the balanced {...} of the arenas
    depth += {"{": 1, "}": -1}.get(text[end], 0)
    if depth == 0:
        break
arena = {t: int(b) for t, b in re.findall(
    r"(device|host|nvme) = \{bytes = (\d+) : i64", text[start:end + 1])}

# Buffers as (tier, start, end, what); permanent ones are checked pairwise.
permanent, transient = [], []
for line in text.splitlines():
    w = re.search(r'"loom.weight"\(\) \{.*loom.placement = \{([^}]*)\}.*name = "([^"]+)".*-> (tensor<[^>]*>)', line)
    if w:
        fields = dict(re.findall(r"(\w+) = \"?(\w+)\"?", w.group(1)))
        size = tensor_bytes(w.group(3))
        name = w.group(2)
        params = size // ELEMENT_BYTES[re.search(r"x([a-z]\w*)>", w.group(3)).group(1)]
        optimizer = fields.get("optimizer")
        buffers = [(fields["tier"], "offset", size),
                   ("host", "copy_offset", size),
                   ("device" if optimizer == "device" else "host",
                    "gradient_offset", size),
                   (optimizer, "optimizer_offset", params * STATE_BYTES)]
        assert "offset" in fields, "weight %s has no offset" % name
        for tier, key, bytes_ in buffers:
            if key in fields:
                at = int(fields[key])
                permanent.append((tier, at, at + bytes_, "%s %s" % (name, key)))
        continue
    f = re.search(r'"loom.fetch"\(%[\w#]+\) <?\{[^}]*offset = (\d+)[^}]*\}>? .*-> (tensor<[^>]*>)', line)
    if f:
        at = int(f.group(1))
        transient.append(("device", at, at + tensor_bytes(f.group(2)), "fetch at %d" % at))
        continue
    o = re.search(r"loom.offsets = \{([^}]*)\}", line)
    if o and "->" in line:
        if '"func.func"' in line:  # argument attributes: one slot each
            types = re.findall(r"tensor<[^>]*>",
                               re.search(r"function_type = \(([^)]*)\)", line).group(1))
            attrs = line[line.index("arg_attrs = [") + len("arg_attrs = ["):]
            entries, depth, start = [], 0, 0
            for k, ch in enumerate(attrs):
                if ch == "{":
                    depth += 1
                    start = k if depth == 1 else start
                elif ch == "}":
                    depth -= 1
                    if depth == 0:
                        entries.append(attrs[start:k + 1])
                elif ch == "]" and depth == 0:
                    break
            slots = [(types[i], e) for i, e in enumerate(entries)]
        else:
            slots = [(None, o.group(1))]
        for t, entry in slots:
            types = [t] if t else result_types(line)
            for key, arr in re.findall(r"(backward|forward|gradient|host) = array<i64: ([^>]*)>", entry):
                tier = "host" if key == "host" else "device"
                for at, ty in zip(ints(arr), types):
                    if at >= 0:
                        transient.append((tier, at, at + tensor_bytes(ty), "%s result at %d" % (key, at)))

for tier, start, end, what in permanent + transient:
    assert tier in arena, "%s is in the %s arena, which the plan lacks" % (what, tier)
    assert 0 <= start and end <= arena[tier], "%s [%d, %d) is outside the %s arena of %d bytes" % (what, start, end, tier, arena[tier])
for i, (tier, start, end, what) in enumerate(permanent):
    for tier2, start2, end2, what2 in permanent[i + 1:] + transient:
        assert tier != tier2 or end <= start2 or end2 <= start, \
            "%s [%d, %d) and %s [%d, %d) share %s bytes" % (what, start, end, what2, start2, end2, tier)
for tier in ("device", "host", "nvme"):
    if tier in arena:
        kind = lambda t: "fetch" if t[3].startswith("fetch") else \
            "gradient" if t[3].startswith("gradient") else "activation"
        print("%s arena %d bytes: %d weight buffers, %d fetched copies, %d "
              "activations, %d activation gradients, no overlap"
              % (tier, arena[tier], sum(p[0] == tier for p in permanent),
                 sum(t[0] == tier and kind(t) == "fetch" for t in transient),
                 sum(t[0] == tier and kind(t) == "activation" for t in transient),
                 sum(t[0] == tier and kind(t) == "gradient" for t in transient)))
