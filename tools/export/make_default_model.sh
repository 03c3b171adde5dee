# tools/export/make_default_model.sh — regenerates Loom's bundled default model in models/.
#
# The default model is a GPT-2-style decoder small enough to commit (2 layers, d_model 64,
# 4 heads, vocab 256, sequence 32, batch 1; about 120k parameters, under 0.5 MB per format):
# the `tiny` config of tools/export/models.py with random weights from seed 0. The script
# writes the ONNX model, the loom-trace JSON + weights, the reference numbers and the example
# input/expected output, and checks the trace against PyTorch. Run from anywhere:
#
#   sh tools/export/make_default_model.sh
set -eu
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
/usr/bin/python3 tools/export/make_models.py --out models --models gpt2 --config tiny \
    --name-with-config --formats onnx,trace --no-fold --check
