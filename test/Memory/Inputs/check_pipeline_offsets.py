"""Checks a pipelined program's static memory plans from the IR alone (read
from stdin, the default printed form): loom.memory_plan's `pipeline_arenas`
holds one dictionary of arenas per pipeline device; every op's
`loom.pipeline_offsets` names the device its `loom.stage` runs on (stage mod
the pipeline devices) and holds, per array, MICRO_BATCHES slots per result;
each `loom.received_offsets` entry names another device than its
`loom.pipeline_offsets` (an op's, or an argument's); every offset an op,
an argument or a weight (`loom.placement`'s `pipeline_offsets`) has lies
inside its device's arena of its tier. Buffer sizes are not in the IR
(partitioned programs' local shapes differ from its types), so overlaps are
not checked here: placement checks and replays each device's plan before
writing it.

Prints per device: the ops, received values and weights placed on it, and
how many values' forward buffers differ for every micro-batch (all of them
in flight at once, as under GPipe).

Usage: check_pipeline_offsets.py MICRO_BATCHES < module.mlir"""
import re
import sys

micro_batches = int(sys.argv[1])
text = sys.stdin.read()


def balanced(s, start, open_ch, close_ch):
    """The text of the balanced open_ch...close_ch group starting at s[start]."""
    depth = 0
    for k in range(start, len(s)):
        depth += {open_ch: 1, close_ch: -1}.get(s[k], 0)
        if depth == 0:
            return s[start:k + 1]
    sys.exit("unbalanced %s at %d" % (open_ch, start))


def top_level_dicts(group):
    """The {...} entries of a [...] group."""
    out, k = [], 1
    while True:
        k = group.find("{", k)
        if k < 0:
            return out
        d = balanced(group, k, "{", "}")
        out.append(d)
        k += len(d)


start = text.find("pipeline_arenas = [")
assert start >= 0, "no pipeline_arenas in loom.memory_plan"
arenas = []
for d in top_level_dicts(balanced(text, text.index("[", start), "[", "]")):
    arenas.append({t: int(b) for t, b in re.findall(r"(device|host|nvme) = \{bytes = (\d+) : i64", d)})
devices = len(arenas)
assert devices >= 2, "a pipelined plan has %d pipeline devices" % devices


def ints(s):
    return [int(x) for x in s.split(",")] if s.strip() else []


def check_slot(device, tier, at, what):
    assert tier in arenas[device], "%s: pipeline device %d has no %s arena" % (what, device, tier)
    assert 0 <= at < arenas[device][tier], "%s: offset %d outside pipeline device %d's %s arena of %d bytes" % (
        what, at, device, tier, arenas[device][tier])


def check_offsets(entry, what, expect_device=None):
    """One {device = D : i64, backward/forward/gradient/host = array<...>} entry."""
    m = re.search(r"device = (\d+) : i64", entry)
    assert m, "%s: no device in %s" % (what, entry)
    device = int(m.group(1))
    assert device < devices, "%s: pipeline device %d of %d" % (what, device, devices)
    if expect_device is not None:
        assert device == expect_device, "%s: on pipeline device %d, its stage runs on %d" % (what, device, expect_device)
    arrays = dict(re.findall(r"(backward|forward|gradient|host) = array<i64: ([^>]*)>", entry))
    assert arrays, "%s: no offsets in %s" % (what, entry)
    for key, arr in arrays.items():
        slots = ints(arr)
        assert len(slots) % micro_batches == 0, "%s: %d %s slots for %d micro-batches" % (
            what, len(slots), key, micro_batches)
        for at in slots:
            if at >= 0:
                check_slot(device, "host" if key == "host" else "device", at, what)
    return device, arrays


ops = [0] * devices
received = [0] * devices
weights = [0] * devices
distinct = [0] * devices  # values with a forward buffer of their own per micro-batch
valued = [0] * devices
def pieces(line):
    """A function line's arguments one by one (each has its own offsets); any
    other line whole."""
    if "func.func" not in line:
        return [line]
    return re.split(r"(?=%arg\d+: )", line)[1:]


for n, line in ((n, piece) for n, whole in enumerate(text.splitlines(), 1) for piece in pieces(whole)):
    what = "line %d" % n
    p = re.search(r"loom.pipeline_offsets = (\{[^}]*\})", line)
    if p:
        s = re.search(r"loom.stage = (\d+) : i64", line)
        device, arrays = check_offsets(p.group(1), what, int(s.group(1)) % devices if s else None)
        ops[device] += 1
        slots = ints(arrays.get("forward", ""))
        results = len(slots) // micro_batches
        for r in range(results):
            per = [slots[k * results + r] for k in range(micro_batches)]
            if all(at >= 0 for at in per):
                valued[device] += 1
                distinct[device] += len(set(per)) == micro_batches
    g = re.search(r"loom.received_offsets = \[", line)
    if g:
        own = int(re.search(r"device = (\d+)", p.group(1)).group(1)) if p else None
        for entry in top_level_dicts(balanced(line, g.end() - 1, "[", "]")):
            device, _ = check_offsets(entry, what + " (received)")
            assert device != own, "%s: received on its own pipeline device %d" % (what, device)
            received[device] += 1
    w = re.search(r"loom.placement = \{", line)
    if w and "loom.weight" in line:
        placement = balanced(line, w.end() - 1, "{", "}")
        fields = dict(re.findall(r"(optimizer|tier|sums) = \"(\w+)\"", placement))
        q = re.search(r"pipeline_offsets = \[", placement)
        assert q, "%s: a weight without pipeline_offsets" % what
        for entry in top_level_dicts(balanced(placement, q.end() - 1, "[", "]")):
            device = int(re.search(r"device = (\d+) : i64", entry).group(1))
            assert device < devices, "%s: pipeline device %d of %d" % (what, device, devices)
            tiers = {"offset": fields.get("tier", "device"), "copy_offset": "host",
                     "gradient_offset": "device" if fields.get("optimizer", "device") == "device" else "host",
                     "optimizer_offset": fields.get("optimizer", "device"),
                     "sum_offset": fields.get("sums", "device")}
            for key, at in re.findall(r"(\w+) = (\d+) : i64", entry):
                if key in tiers:
                    check_slot(device, tiers[key], int(at), "%s %s" % (what, key))
            weights[device] += 1

for d in range(devices):
    print("pipeline device %d: %d ops, %d received values, %d weights; %d of %d values "
          "have a forward buffer of their own per micro-batch"
          % (d, ops[d], received[d], weights[d], distinct[d], valued[d]))
