#!/usr/bin/env python3
"""Writes a synthetic PyTorch profiler (Kineto) Chrome trace of a few training steps of an MLP.

The trace has the structure torch.profiler's export_chrome_trace writes (PyTorch 2.x, Kineto):
"deviceProperties", and "traceEvents" with ProfilerStep#N user annotations, an
enumerate(DataLoader)# span, cpu_op events with "Input Dims"/"Input type" (record_shapes=True),
the forward on the main thread, the backward under autograd::engine::evaluate_function ops on the
autograd thread, Optimizer.step#SGD.step, cuda_runtime launches (cudaLaunchKernel) with
correlation ids, their kernels (cat "kernel", args stream/correlation/grid/block) and ac2g flow
events. Its timeline comes from a small host/device process: the host thread spends some Python
time per op, then the launch call; a kernel starts when the device is free (plus the device's gap
between kernels) and its launch has returned (plus the launch latency); optional syncs make the
host wait for the device (GradScaler's inf check before the optimizer, loss.item() at the end).

The measured step of such a trace is known exactly, so the import round trip
(tests/import/import_test.cpp) can assert trainsim's simulation of the imported workload against
it. Kernel durations are the MLP's GEMM FLOPs at a fixed achieved rate plus element-wise kernels
at a fixed bandwidth (illustrative, not measured: the trace is synthetic by design).

usage: make_kineto_trace.py OUT.json [--steps N] [--layers L] [--width D] [--batch B]
       [--host-us US] [--no-sync] [--events-scale K] [--warmup-extra]
"""

import argparse
import json
import sys


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--width", type=int, default=4096)
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--host-us", type=float, default=12.0, help="host Python time per op")
    p.add_argument("--no-sync", action="store_true", help="no host syncs (host runs ahead)")
    p.add_argument("--warmup-extra", action="store_true",
                   help="step 1 launches an extra kernel (autotuning), as real first steps do")
    p.add_argument("--gemm-tflops", type=float, default=600.0)
    p.add_argument("--device", default="NVIDIA H100 80GB HBM3")
    p.add_argument("--compact", action="store_true", help="no indentation (large traces)")
    a = p.parse_args()

    ev = []
    corr = [1000]
    state = {"host": 0.0, "device": 0.0}
    MAIN, AUTOGRAD, STREAM = 1001, 1002, 7
    GAP_US, LAT_US, LAUNCH_US = 2.0, 3.0, 4.0

    def X(cat, name, ts, dur, tid, args=None, pid=100):
        e = {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid,
             "ts": round(ts, 3), "dur": round(dur, 3)}
        if args is not None:
            e["args"] = args
        ev.append(e)

    def launch(kernel, dur_us, tid):
        c = corr[0]
        corr[0] += 1
        t0 = state["host"]
        X("cuda_runtime", "cudaLaunchKernel", t0, LAUNCH_US, tid,
          {"External id": c, "cbid": 211, "correlation": c})
        end = t0 + LAUNCH_US
        start = max(state["device"] + GAP_US, end + LAT_US)
        X("kernel", kernel, start, dur_us, STREAM,
          {"External id": c, "queued": 0, "device": 0, "context": 1, "stream": STREAM,
           "correlation": c, "registers per thread": 128, "shared memory": 0,
           "grid": [132, 1, 1], "block": [256, 1, 1]}, pid=0)
        ev.append({"ph": "s", "id": c, "pid": 100, "tid": tid, "ts": round(t0, 3),
                   "cat": "ac2g", "name": "ac2g"})
        ev.append({"ph": "f", "id": c, "pid": 0, "tid": STREAM, "ts": round(start, 3),
                   "cat": "ac2g", "name": "ac2g", "bp": "e"})
        state["device"] = start + dur_us
        state["host"] = end

    def op(name, tid, dims, types, kernels):
        """A cpu_op spanning its Python time and its launches."""
        t0 = state["host"]
        state["host"] += a.host_us
        for k, d in kernels:
            launch(k, d, tid)
        X("cpu_op", name, t0, state["host"] - t0, tid,
          {"External id": corr[0], "Input Dims": dims, "Input type": types})

    def sync(tid):
        t0 = state["host"]
        wait = max(0.0, state["device"] - t0)
        X("cuda_runtime", "cudaStreamSynchronize", t0, wait + 1.0, tid, {"cbid": 131})
        state["host"] = t0 + wait + 1.0

    B, D, L = a.batch, a.width, a.layers
    gemm_us = 2.0 * B * D * D / (a.gemm_tflops * 1e12) * 1e6
    bw = 2.0e12  # bytes/s of element-wise kernels
    relu_us = 2 * 2 * B * D / bw * 1e6
    bf = "c10::BFloat16"
    gemm_name = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas"
    relu_name = "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#7}::operator()() const::{lambda(c10::BFloat16)#1}, at::detail::Array<char*, 2> >(int, at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#7}::operator()() const::{lambda(c10::BFloat16)#1}, at::detail::Array<char*, 2>)"
    loss_name = "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, c10::BFloat16, float, float, at::native::(anonymous namespace)::LogSoftMaxForwardEpilogue>"
    opt_name = "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<3>, at::native::(anonymous namespace)::PointwiseOpScalarFunctor<float, 3, 3, 0>, std::multiplies<float>, float>"
    params = L * (D * D + D)
    opt_us = params * 4 * 3 / bw * 1e6 / 4  # four multi-tensor kernels over the fp32 weights

    for s in range(1, a.steps + 1):
        step_t0 = state["host"]
        dl0 = state["host"]
        state["host"] += 150.0  # waiting for the next batch
        X("user_annotation", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
          dl0, 150.0, MAIN)
        state["host"] += 20.0  # copy to device, zero_grad, Python
        if a.warmup_extra and s == 1:
            op("aten::zeros", MAIN, [[]], [""], [("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float> >", 5.0)])
        for i in range(L):
            op("aten::linear", MAIN, [[B, D], [D, D], [D]], [bf, "float", "float"],
               [(gemm_name, gemm_us)])
            op("aten::relu", MAIN, [[B, D]], [bf], [(relu_name, relu_us)])
        op("aten::cross_entropy_loss", MAIN, [[B, D], [B]], [bf, "long int"],
           [(loss_name, relu_us)])
        # Backward on the autograd thread, the reverse order.
        state["host"] += 10.0
        for i in reversed(range(L)):
            t0 = state["host"]
            state["host"] += a.host_us
            op("aten::threshold_backward", AUTOGRAD, [[B, D], [B, D], []], [bf, bf, "Scalar"],
               [(relu_name, relu_us)])
            X("cpu_op", "autograd::engine::evaluate_function: ReluBackward0", t0,
              state["host"] - t0, AUTOGRAD, {"External id": corr[0]})
            t0 = state["host"]
            state["host"] += a.host_us
            op("aten::mm", AUTOGRAD, [[B, D], [D, D]], [bf, bf], [(gemm_name, gemm_us)])
            op("aten::mm", AUTOGRAD, [[D, B], [B, D]], [bf, bf], [(gemm_name, gemm_us)])
            X("cpu_op", "autograd::engine::evaluate_function: AddmmBackward0", t0,
              state["host"] - t0, AUTOGRAD, {"External id": corr[0]})
        if not a.no_sync:
            sync(MAIN)  # GradScaler's inf check reads a device value
        o0 = state["host"]
        for _ in range(4):
            op("aten::_foreach_mul_", MAIN, [[], []], ["TensorList", "Scalar"],
               [(opt_name, opt_us)])
        X("user_annotation", "Optimizer.step#SGD.step", o0, state["host"] - o0, MAIN)
        if not a.no_sync:
            sync(MAIN)  # loss.item()
        state["host"] += 15.0  # logging, loop
        X("user_annotation", "ProfilerStep#%d" % s, step_t0, state["host"] - step_t0, MAIN)

    ev.sort(key=lambda e: (e["ts"], -e.get("dur", 0)))
    doc = {
        "schemaVersion": 1,
        "deviceProperties": [{"id": 0, "name": a.device, "totalGlobalMem": 85029158912,
                              "computeMajor": 9, "computeMinor": 0, "numSms": 132}],
        "traceEvents": ev,
        "traceName": "synthetic",
        "displayTimeUnit": "ms",
    }
    with open(a.out, "w") as f:
        if a.compact:
            json.dump(doc, f, separators=(",", ":"))
        else:
            json.dump(doc, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
