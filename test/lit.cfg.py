# lit.cfg.py - lit configuration for Loom's regression tests.
#
# Tests run the built tools (loom-opt, loom-translate, loom) with FileCheck.
# Optional features gate tests that need more than the base install:
#   torch   - Debian's python3-torch can export the real models
#   onnx    - python3-onnx is importable (model generation)
#   cuda / mpi - reserved for the runtime tests of later phases

import os
import shutil
import subprocess

import lit.formats
from lit.llvm import llvm_config

config.name = "Loom"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".onnxtext", ".json", ".test"]
config.excludes = ["Inputs", "lit.cfg.py", "CMakeLists.txt", "README.md"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.loom_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%python", config.python_executable))
config.substitutions.append(("%loom_src", config.loom_src_root))
config.substitutions.append(("%loom_obj", config.loom_obj_root))

llvm_config.with_system_environment(["HOME", "TMPDIR", "TMP", "TEMP"])
llvm_config.use_default_substitutions()
tool_dirs = [config.loom_tools_dir, config.llvm_tools_dir]
llvm_config.add_tool_substitutions(
    ["loom-opt", "loom-translate", "loom", "loom-onnx-fuzz-replay",
     "loom-trace-fuzz-replay", "loom-cost-fuzz-replay", "loom-manifest-fuzz-replay",
     "loom-run"], tool_dirs)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.loom_tools_dir, append_path=True)


def python_has(module):
    return subprocess.call(
        [config.python_executable, "-c", "import " + module],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) == 0


if python_has("torch") and python_has("torchvision"):
    config.available_features.add("torch")
if python_has("onnx"):
    config.available_features.add("onnx")
if shutil.which("nvidia-smi") and subprocess.call(
        ["nvidia-smi"], stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL) == 0:
    config.available_features.add("cuda")
if shutil.which("mpirun"):
    config.available_features.add("mpi")

# Execution tests of the CPU lowering: mlir-runner JIT-runs a lowered module
# with upstream's printing helpers (%mlir_runner ... | FileCheck).
runner_libs = ",".join(
    os.path.join(config.llvm_lib_dir, lib)
    for lib in ["libmlir_runner_utils.so", "libmlir_c_runner_utils.so"])
config.substitutions.append(
    ("%mlir_runner",
     os.path.join(config.llvm_tools_dir, "mlir-runner") +
     " -e main -entry-point-result=void -shared-libs=" + runner_libs))
# Several MPI ranks on this machine, as root, more ranks than cores. Each
# test's jobs keep their Open MPI session directory under the test's own
# path (lit substitutes %t after this): under lit's one shared TMPDIR, a job
# ending removed the per-host directory another test's job was creating its
# own in ("orte_session_dir failed", moe-plans.test once).
config.substitutions.append(
    ("%mpirun",
     "mpirun --allow-run-as-root --oversubscribe --mca orte_tmpdir_base %t.ompi"))
