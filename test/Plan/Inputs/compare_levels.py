"""Compares a level=fast plan report with a level=thorough one of the same
model: the fast plan must fit, its estimated step must be within --within
times the thorough one's, and (with --speedup) its search must take at least
that many times less. Prints one line; exits 1 when a check fails."""
import argparse
import json
import sys

parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("fast")
parser.add_argument("thorough")
parser.add_argument("--within", type=float, required=True)
parser.add_argument("--speedup", type=float, default=0)
args = parser.parse_args()

fast = json.load(open(args.fast))
thorough = json.load(open(args.thorough))
for report, level in ((fast, "fast"), (thorough, "thorough")):
    if report["level"] != level:
        sys.exit(f"{args.fast if level == 'fast' else args.thorough}: level is "
                 f"{report['level']}, not {level}")

def step(report):
    best = report["best"]
    return best.get("estimated_step_time_s", best["step_time_s"])

ratio = step(fast) / step(thorough)
problems = []
if not fast["best"]["fits"]:
    problems.append("the fast plan does not fit")
if ratio > args.within:
    problems.append(f"step {ratio:.3f}x of thorough's, over {args.within}")
if args.speedup:
    speedup = thorough["search_seconds"] / fast["search_seconds"]
    if speedup < args.speedup:
        problems.append(f"search only {speedup:.1f}x faster, under {args.speedup}")
print(f"fast plan {'fits' if fast['best']['fits'] else 'does not fit'}; step within "
      f"{ratio:.3f}x of thorough: {'; '.join(problems) if problems else 'ok'}")
sys.exit(1 if problems else 0)
