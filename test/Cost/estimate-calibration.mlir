// A calibration file's measured timings replace the model's: the matmul
// (8x64 * 64x32, fp32) takes the measured 10 us instead of the roofline's
// 0.11264 us; relu keeps its 0.02048 us. The row-parallel all-reduce of
// 2048 bytes over the 4 devices of one node takes the measured 50 us
// instead of 0.3072 us.
// RUN: loom-opt %S/estimate-single-device.mlir --loom-estimate="cluster=%S/Inputs/unit-cluster.json mode=infer table=none calibration=%S/Inputs/unit-calibration.json" | FileCheck %s
// RUN: loom-opt %S/estimate-megatron-mlp.mlir --loom-estimate="cluster=%S/Inputs/unit-cluster.json mode=infer table=none annotate-ops calibration=%S/Inputs/unit-calibration.json" | FileCheck %s --check-prefix=COMM

// CHECK: step_time_s = {{1.002048[0-9]*(e-05|E-5)|1.002047[0-9]*(e-05|E-5)}}
// COMM: loom.matmul {{.*}}comm_us = 0.000000e+00
// COMM: loom.matmul {{.*}}comm_us = {{5.000000e\+01|49.9999[0-9]*|50.0000[0-9]*}}
