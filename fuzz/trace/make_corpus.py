# fuzz/trace/make_corpus.py — regenerates the seed corpus of the trace importer fuzzer.
"""Collects the JSON traces of test/Translate/Trace/*.test (split-file sections) and, when
--models DIR is given, the zoo's small traces (tools/export/make_models.py --formats trace),
points every storage file at the fuzzer's scratch `w.bin`, and writes them to corpus/ as
seed-<name>.json. Crashers found by fuzzing are kept there too, as crash-<what>.json.

    /usr/bin/python3 fuzz/trace/make_corpus.py [--models /tmp/models]
"""

import glob
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.join(HERE, "..", "..", "test", "Translate", "Trace")


def retarget(text):
    """Storage files become w.bin (the fuzzer writes it); malformed JSON is kept as is."""
    try:
        doc = json.loads(text)
    except ValueError:
        return text
    if isinstance(doc, dict):
        for section in ("parameters", "constants"):
            for e in doc.get(section, []) if isinstance(doc.get(section), list) else []:
                if isinstance(e, dict) and isinstance(e.get("storage"), dict):
                    e["storage"]["file"] = "w.bin"
    return json.dumps(doc, separators=(",", ":"))


def main(argv):
    out = os.path.join(HERE, "corpus")
    os.makedirs(out, exist_ok=True)
    for old in glob.glob(os.path.join(out, "seed-*.json")):
        os.remove(old)
    for test in sorted(glob.glob(os.path.join(TESTS, "*.test"))):
        stem = os.path.splitext(os.path.basename(test))[0]
        parts = re.split(r"^#--- (\S+)\n", open(test).read(), flags=re.M)
        for name, body in zip(parts[1::2], parts[2::2]):
            path = os.path.join(out, f"seed-{stem}-{os.path.splitext(name)[0]}.json")
            with open(path, "w") as f:
                f.write(retarget(body))
    if len(argv) == 2 and argv[0] == "--models":
        for trace in sorted(glob.glob(os.path.join(argv[1], "*.trace.json"))):
            name = os.path.basename(trace)[:-len(".trace.json")]
            with open(os.path.join(out, f"seed-model-{name}.json"), "w") as f:
                f.write(retarget(open(trace).read()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
