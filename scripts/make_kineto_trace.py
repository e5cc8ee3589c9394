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

With --transformer the model is a GPT-style decoder instead (token embedding, L blocks of
LayerNorm, QKV linear, fused attention, output projection, residual add, LayerNorm, fc1, GELU,
fc2, residual add; final LayerNorm, LM head, cross entropy) traced with with_modules=True: its
python_function events "nn.Module: <class>_<n>" (Embedding, Block, CausalSelfAttention, MLP,
Linear, LayerNorm) hold the module hierarchy the import reads tensor-parallel roles from.

usage: make_kineto_trace.py OUT.json [--steps N] [--layers L] [--width D] [--batch B]
       [--host-us US] [--no-sync] [--events-scale K] [--warmup-extra]
       [--transformer [--seq S] [--heads H] [--vocab V]]
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
    p.add_argument("--transformer", action="store_true", help="a GPT-style decoder with modules")
    p.add_argument("--seq", type=int, default=512)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--vocab", type=int, default=32000)
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

    if a.transformer:
        return transformer(a, ev, X, op, sync, state, MAIN, AUTOGRAD)

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

    return write(a, ev)


def write(a, ev):
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


def transformer(a, ev, X, op, sync, state, MAIN, AUTOGRAD):
    """A GPT-style decoder step; one backward group per forward layer, in reverse."""
    B, S, D, L, V = a.batch, a.seq, a.width, a.layers, a.vocab
    T = B * S
    bf = "c10::BFloat16"
    bw = 2.0e12  # bytes/s of element-wise kernels

    def gemm_us(m, n, k):
        return 2.0 * m * n * k / (a.gemm_tflops * 1e12) * 1e6

    def ew_us(elements):
        return 2 * 2 * elements / bw * 1e6

    gemm = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_kernel__5x_cublas"
    ew = "void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<c10::BFloat16> >"
    gelu = "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl>"
    ln = "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>"
    ln_bwd = "void at::native::(anonymous namespace)::layer_norm_grad_input_kernel<c10::BFloat16>"
    flash = "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4> >"
    flash_bwd = "void pytorch_flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<64>"
    emb = "void at::native::(anonymous namespace)::indexSelectLargeIndex<c10::BFloat16, long>"
    emb_bwd = "void at::native::(anonymous namespace)::embedding_backward_feature_kernel<c10::BFloat16>"
    red = "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()>::{lambda(float, float)#1}, unsigned int, c10::BFloat16, 4> >"
    sm = "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, c10::BFloat16, float, float, at::native::(anonymous namespace)::LogSoftMaxForwardEpilogue>"
    sm_bwd = "void at::native::(anonymous namespace)::cunn_SoftMaxBackward<4, c10::BFloat16, float, float, at::native::(anonymous namespace)::LogSoftMaxBackwardEpilogue>"
    opt = "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<3>, at::native::(anonymous namespace)::PointwiseOpScalarFunctor<float, 3, 3, 0>, std::multiplies<float>, float>"
    attn_us = 4.0 * B * S * S * D / (0.5 * a.gemm_tflops * 1e12) * 1e6
    counts = {}

    def module(cls, body):
        n = counts.get(cls, 0)
        counts[cls] = n + 1
        t0 = state["host"]
        body()
        X("python_function", "nn.Module: %s_%d" % (cls, n), t0, state["host"] - t0, MAIN)

    # Forward layers, each (forward op, backward (name, [ops])) for the reversed backward.
    layers = []

    def linear(n_out, k_in, bias=True):
        dims = [[B, S, k_in], [n_out, k_in]] + ([[n_out]] if bias else [])
        def fwd():
            op("aten::linear", MAIN, dims, [bf] * len(dims), [(gemm, gemm_us(T, n_out, k_in))])
        module("Linear", fwd)
        bwd = [("aten::mm", [[T, n_out], [n_out, k_in]], [(gemm, gemm_us(T, k_in, n_out))]),
               ("aten::mm", [[n_out, T], [T, k_in]], [(gemm, gemm_us(n_out, k_in, T))])]
        if bias:
            bwd.append(("aten::sum", [[T, n_out]], [(red, ew_us(T * n_out) / 2)]))
        layers.append(("AddmmBackward0", bwd))

    def layer_norm():
        def fwd():
            op("aten::layer_norm", MAIN, [[B, S, D], [D], [D], [D]], [bf, "", bf, bf],
               [(ln, ew_us(T * D))])
        module("LayerNorm", fwd)
        layers.append(("NativeLayerNormBackward0",
                       [("aten::native_layer_norm_backward", [[B, S, D], [B, S, D]],
                         [(ln_bwd, 2 * ew_us(T * D))])]))

    def elementwise(name, bwd_name, elements, kernel=ew):
        dims = [[B, S, elements // T]]
        op(name, MAIN, dims, [bf], [(kernel, ew_us(elements))])
        layers.append((bwd_name, [("aten::add", dims, [(ew, ew_us(elements))])]))

    def attention():
        linear(3 * D, D)
        hd = D // a.heads
        op("aten::scaled_dot_product_attention", MAIN, [[B, a.heads, S, hd]] * 3, [bf] * 3,
           [(flash, attn_us)])
        layers.append(("ScaledDotProductFlashAttentionBackward0",
                       [("aten::_scaled_dot_product_flash_attention_backward",
                         [[B, a.heads, S, hd]] * 4, [(flash_bwd, 2.5 * attn_us)])]))
        linear(D, D)

    def mlp():
        linear(4 * D, D)
        elementwise("aten::gelu", "GeluBackward0", T * 4 * D, gelu)
        linear(D, 4 * D)

    def block():
        layer_norm()
        module("CausalSelfAttention", attention)
        elementwise("aten::add", "AddBackward0", T * D)
        layer_norm()
        module("MLP", mlp)
        elementwise("aten::add", "AddBackward0", T * D)

    def model():
        module("Embedding", lambda: op("aten::embedding", MAIN, [[V, D], [B, S]], [bf, "long int"],
                                       [(emb, ew_us(T * D))]))
        layers.append(("EmbeddingBackward0", [("aten::embedding_dense_backward",
                                                [[B, S, D], [B, S]], [(emb_bwd, 2 * ew_us(T * D))])]))
        for _ in range(L):
            module("Block", block)
        layer_norm()
        linear(V, D, bias=False)
        op("aten::cross_entropy_loss", MAIN, [[T, V], [T]], [bf, "long int"], [(sm, ew_us(T * V))])
        layers.append(("LogSoftmaxBackward0", [("aten::_log_softmax_backward_data",
                                                 [[T, V], [T, V]], [(sm_bwd, ew_us(T * V))])]))

    params = V * D + L * (12 * D * D + 13 * D) + 2 * D + V * D
    opt_us = params * 4 * 3 / bw * 1e6 / 4
    for s in range(1, a.steps + 1):
        step_t0 = state["host"]
        state["host"] += 150.0
        X("user_annotation", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
          step_t0, 150.0, MAIN)
        state["host"] += 20.0
        layers.clear()
        module("GPT", model)
        state["host"] += 10.0
        for name, ops in reversed(layers):
            t0 = state["host"]
            state["host"] += a.host_us
            for oname, dims, kernels in ops:
                op(oname, AUTOGRAD, dims, [bf] * len(dims), kernels)
            X("cpu_op", "autograd::engine::evaluate_function: " + name, t0, state["host"] - t0,
              AUTOGRAD, {"External id": 0})
        if not a.no_sync:
            sync(MAIN)
        o0 = state["host"]
        for _ in range(4):
            op("aten::_foreach_mul_", MAIN, [[], []], ["TensorList", "Scalar"], [(opt, opt_us)])
        X("user_annotation", "Optimizer.step#AdamW.step", o0, state["host"] - o0, MAIN)
        if not a.no_sync:
            sync(MAIN)
        state["host"] += 15.0
        X("user_annotation", "ProfilerStep#%d" % s, step_t0, state["host"] - step_t0, MAIN)
    return write(a, ev)


if __name__ == "__main__":
    sys.exit(main())
