#!/usr/bin/env python3
"""Measures one CUDA GPU with PyTorch for trainsim's reference data (issue 13, item 7).

trainsim itself never needs a GPU; this script is how its GPU-measured tables were made. It writes
into OUT_DIR (default $OUT):

  gpu_env.json            machine, driver, library versions, ceilings (copy bandwidth, large GEMM
                          rate per dtype), host dispatch cost per tiny op
  gpu_training_steps.csv  training step time and peak memory of zoo models at several batch sizes
                          and precisions (synthetic data on the GPU, PyTorch eager)
  gpu_profile_kernels.csv torch.profiler's GPU kernels of one training step per (model, precision,
                          batch): name, calls, total time
  gpu_kernels_gemm.csv    GEMM time at DeepBench's training shapes (fp32, tf32, bf16)
  gpu_kernels_memory.csv  memory-bound kernels (copy, add, GELU, layer norm, softmax, ...) vs size
  gpu_kernels_conv.csv    convolution forward / data-gradient / weight-gradient at DeepBench's shapes
  gpu_kernels_lstm.csv    cuDNN LSTM forward / backward-data / backward-weights at DeepBench's shapes
  gpu_conv_kernels.csv    (section convkernels, not run by default) the kernels cuDNN's autotuner
                          runs for each of those convolution passes: name, launches, device time
  log.txt                 everything printed

Each section stops when the run's budget (--budget-s) is spent, so a partial run still writes what
it measured. Timing: CUDA events around back-to-back launches (as DeepBench times its kernels),
median of several batches, after warm-up; training steps by wall clock over synchronised steps.
Inputs are random, never zeros. Usage: python3 scripts/measure_gpu.py [--budget-s 420] [--quick]
(--quick: tiny sizes, for a dry run of the code path on any machine, CPU included).
"""
import argparse
import csv
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import traceback

import torch
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REF = os.path.join(ROOT, "tests", "reference_data")

ap = argparse.ArgumentParser()
ap.add_argument("--out", default=os.environ.get("OUT", "/tmp/gpu_out"))
ap.add_argument("--budget-s", type=float, default=420)
ap.add_argument("--quick", action="store_true")
ap.add_argument("--eager-kernels", action="store_true",
                help="time GEMM, conv and memory kernels by back-to-back eager launches (the first "
                "run's method) instead of CUDA-graph replay")
ap.add_argument("--points", default="",
                help="train section: only these model:precision:batch points (comma-separated)")
ap.add_argument("--sections", default="env,train,profile,gemm,memory,conv,lstm")
args = ap.parse_args()
os.makedirs(args.out, exist_ok=True)
T0 = time.time()
DEV = torch.device("cuda" if torch.cuda.is_available() else "cpu")
CUDA = DEV.type == "cuda"
LOG = open(os.path.join(args.out, "log.txt"), "a")


def log(*a):
    s = " ".join(str(x) for x in a)
    print(s, flush=True)
    LOG.write(s + "\n")
    LOG.flush()


def left_s():
    return args.budget_s - (time.time() - T0)


def sync():
    if CUDA:
        torch.cuda.synchronize()


def set_tf32(on):
    torch.backends.cuda.matmul.allow_tf32 = on
    torch.backends.cudnn.allow_tf32 = on


def time_ms(fn, min_total_ms=2.0, batches=5, max_reps=200):
    """Median milliseconds per call of fn over `batches` batches of back-to-back calls."""
    fn()
    sync()
    if not CUDA:
        t = time.perf_counter()
        fn()
        return 1e3 * (time.perf_counter() - t)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    end.record()
    end.synchronize()
    one = max(start.elapsed_time(end), 1e-3)
    reps = int(min(max_reps, max(3, min_total_ms / one)))
    out = []
    for _ in range(batches):
        start.record()
        for _ in range(reps):
            fn()
        end.record()
        end.synchronize()
        out.append(start.elapsed_time(end) / reps)
    return statistics.median(out)


GRAPH_FAILS = []


def time_ms_graph(fn, min_total_ms=1.0, max_reps=20):
    """Median milliseconds of fn's kernels with the host out of the way: `reps` calls captured
    in one CUDA graph and replayed, so small kernels are not paced by the host's dispatch (about
    8 us per eager op here). Falls back to time_ms (eager) where capture fails; returns
    (ms, "graph" | "eager")."""
    if not CUDA:
        return time_ms(fn), "eager"
    try:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # warm-up (cuDNN autotuning, workspaces) off the capture
            fn()
            fn()
        torch.cuda.current_stream().wait_stream(side)
        sync()
        one = time_ms(fn, min_total_ms=0.5, batches=1, max_reps=5)
        reps = int(min(max_reps, max(3, min_total_ms / max(one, 1e-3))))
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for _ in range(reps):
                fn()
        g.replay()
        sync()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        out = []
        for _ in range(5):
            start.record()
            g.replay()
            end.record()
            end.synchronize()
            out.append(start.elapsed_time(end) / reps)
        del g
        return statistics.median(out), "graph"
    except Exception as e:  # noqa: BLE001
        if len(GRAPH_FAILS) < 5:
            log(f"graph capture failed, timing eagerly: {e!r}")
        GRAPH_FAILS.append(repr(e))
        sync()
        return time_ms(fn), "eager"


def write_csv(name, header, rows):
    with open(os.path.join(args.out, name), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    log(f"wrote {name}: {len(rows)} rows")


def ref_rows(name):
    with open(os.path.join(REF, name)) as f:
        return list(csv.DictReader(l for l in f if not l.startswith("#")))


def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=20).stdout
    except Exception as e:  # noqa: BLE001
        return f"error: {e}"


GPU_NAME = torch.cuda.get_device_name(0) if CUDA else "cpu"
MACHINE = {}


# ---------------------------------------------------------------- env and ceilings
def section_env():
    env = {
        "gpu": GPU_NAME,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version() if CUDA else None,
        "python": platform.python_version(),
        "nvidia_smi": sh("nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,"
                         "clocks.max.mem,power.limit,pcie.link.gen.max,pcie.link.width.max "
                         "--format=csv"),
        "cpu_model": sh("grep -m1 'model name' /proc/cpuinfo"),
        "cpu_count": os.cpu_count(),
        "lscpu": sh("lscpu"),
        "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    if CUDA:
        p = torch.cuda.get_device_properties(0)
        env["sm_count"] = p.multi_processor_count
        env["memory_bytes"] = p.total_memory
        env["l2_bytes"] = getattr(p, "L2_cache_size", None)
        env["capability"] = f"{p.major}.{p.minor}"
    # Copy bandwidth: bytes read plus written over a large device-to-device copy.
    n = (1 << 20) if args.quick else (1 << 31)
    a = torch.randn(n // 4, device=DEV)
    b = torch.empty_like(a)
    ms = time_ms(lambda: b.copy_(a))
    env["copy_bytes_per_s"] = 2 * a.numel() * 4 / (ms * 1e-3)
    del a, b
    # Large GEMM rate per dtype (random operands).
    rates = {}
    n = 256 if args.quick else 8192
    for name, dt, tf32 in (("fp32", torch.float32, False), ("tf32", torch.float32, True),
                           ("bf16", torch.bfloat16, False), ("fp16", torch.float16, False)):
        if not CUDA and dt != torch.float32:
            continue
        set_tf32(tf32)
        x = torch.randn(n, n, device=DEV, dtype=dt)
        y = torch.randn(n, n, device=DEV, dtype=dt)
        ms = time_ms(lambda: x @ y, min_total_ms=20)
        rates[name] = 2 * n**3 / (ms * 1e-3)
    set_tf32(False)
    env["gemm_8192_flop_per_s"] = rates
    # Host dispatch cost: seconds of Python + dispatcher + launch per tiny op, with the GPU far
    # from busy (the ops are 1 KiB), so the host is the bottleneck.
    t = torch.randn(256, device=DEV)
    for _ in range(200):
        t.add_(1.0)
    sync()
    k = 2000 if args.quick else 20000
    h0 = time.perf_counter()
    for _ in range(k):
        t.add_(1.0)
    h1 = time.perf_counter()
    sync()
    env["host_s_per_tiny_add_"] = (h1 - h0) / k
    lin = torch.nn.Linear(16, 16).to(DEV)
    xi = torch.randn(4, 16, device=DEV)
    for _ in range(200):
        lin(xi)
    sync()
    h0 = time.perf_counter()
    for _ in range(k // 2):
        lin(xi)
    h1 = time.perf_counter()
    sync()
    env["host_s_per_tiny_linear_module"] = (h1 - h0) / (k // 2)
    MACHINE.update(env)
    with open(os.path.join(args.out, "gpu_env.json"), "w") as f:
        json.dump(env, f, indent=1)
    log("env", json.dumps({k: v for k, v in env.items() if k != "lscpu"}, indent=None)[:1500])


# ---------------------------------------------------------------- zoo models
def make_model(name):
    """The PyTorch model matching trainsim's zoo entry `name`, its input maker and loss."""
    if name == "mnist_mlp":
        m = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(784, 128), torch.nn.ReLU(),
                                torch.nn.Linear(128, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10))

        def inputs(b):
            return (torch.randn(b, 1, 28, 28, device=DEV), torch.randint(0, 10, (b,), device=DEV))

        def loss(m, x, y):
            return F.cross_entropy(m(x), y)

        return m, inputs, loss, "sgd_momentum"
    if name in ("resnet50", "vgg16"):
        import torchvision

        m = getattr(torchvision.models, name)(num_classes=1000)
        r = 64 if args.quick else 224

        def inputs(b):
            return (torch.randn(b, 3, r, r, device=DEV), torch.randint(0, 1000, (b,), device=DEV))

        def loss(m, x, y):
            return F.cross_entropy(m(x), y)

        return m, inputs, loss, "sgd_momentum"
    if name in ("bert_base", "bert_large"):
        from transformers import BertConfig, BertForSequenceClassification

        big = name == "bert_large"
        cfg = BertConfig(hidden_size=1024 if big else 768, num_hidden_layers=24 if big else 12,
                         num_attention_heads=16 if big else 12,
                         intermediate_size=4096 if big else 3072, num_labels=2)
        if args.quick:
            cfg.num_hidden_layers = 2
        m = BertForSequenceClassification(cfg)
        seq = 32 if args.quick else 128

        def inputs(b):
            return (torch.randint(0, 30522, (b, seq), device=DEV),
                    torch.randint(0, 2, (b,), device=DEV))

        def loss(m, x, y):
            return m(input_ids=x, labels=y).loss

        log(f"{name}: attention implementation {getattr(cfg, '_attn_implementation', '?')}")
        return m, inputs, loss, "adamw"
    if name == "gpt2":
        from transformers import GPT2Config, GPT2LMHeadModel

        cfg = GPT2Config()
        if args.quick:
            cfg.n_layer = 2
        m = GPT2LMHeadModel(cfg)
        seq = 64 if args.quick else 1024

        def inputs(b):
            x = torch.randint(0, 50257, (b, seq), device=DEV)
            return (x, x)

        def loss(m, x, y):
            return m(input_ids=x, labels=y).loss

        return m, inputs, loss, "adamw"
    raise ValueError(name)


PRECISIONS = {"fp32": (False, None), "tf32": (True, None), "bf16": (True, torch.bfloat16)}


def profiled_kernels(fn):
    """The GPU kernels of one call of fn under torch.profiler, as (name, launches, device us),
    longest first; on a machine without CUDA, its top-level CPU ops and their CPU time."""
    from torch.profiler import ProfilerActivity, profile as tprof

    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if CUDA else [])
    with tprof(activities=acts) as p:
        fn()
        sync()
    agg = {}
    for ev in p.events():
        dev_type = str(getattr(ev, "device_type", ""))
        if CUDA and "CUDA" not in dev_type:
            continue
        if not CUDA and ev.cpu_parent is not None:
            continue
        us = (getattr(ev, "device_time", None) or getattr(ev, "cuda_time", 0)) if CUDA \
            else ev.cpu_time
        a = agg.setdefault(ev.name, [0, 0.0])
        a[0] += 1
        a[1] += us
    return sorted(((k, c, us) for k, (c, us) in agg.items()), key=lambda t: -t[2])


def train_point(name, prec, batch, steps, profile=False):
    tf32, amp = PRECISIONS[prec]
    set_tf32(tf32)
    torch.backends.cudnn.benchmark = True
    try:  # build on the GPU (PyTorch 2's device context): a CPU init of BERT-large takes seconds
        with torch.device(DEV):
            model, inputs, loss_fn, opt_name = make_model(name)
    except (AttributeError, TypeError):
        model, inputs, loss_fn, opt_name = make_model(name)
    model = model.to(DEV)
    channels_last = amp is not None and name in ("resnet50", "vgg16")
    if channels_last:
        model = model.to(memory_format=torch.channels_last)
    if opt_name == "adamw":
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    else:
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x, y = inputs(batch)
    if channels_last:
        x = x.contiguous(memory_format=torch.channels_last)

    def step():
        opt.zero_grad(set_to_none=True)
        if amp is not None:
            with torch.autocast(device_type=DEV.type, dtype=amp):
                l = loss_fn(model, x, y)
        else:
            l = loss_fn(model, x, y)
        l.backward()
        opt.step()

    for _ in range(3):
        step()
    sync()
    if CUDA:
        torch.cuda.reset_peak_memory_stats()
    times = []
    for _ in range(steps):
        t = time.perf_counter()
        step()
        sync()
        times.append(time.perf_counter() - t)
    peak = torch.cuda.max_memory_allocated() if CUDA else 0
    prof_rows = []
    if profile:
        for kname, calls, us in profiled_kernels(step):
            prof_rows.append([name, prec, batch, kname, calls, f"{us:.3f}"])
    n_params = sum(p.numel() for p in model.parameters())
    del model, opt, x, y
    if CUDA:
        torch.cuda.empty_cache()
    return statistics.median(times), min(times), peak, n_params, prof_rows


def section_train():
    plan = [
        ("resnet50", ["bf16", "tf32", "fp32"], [1, 4, 16, 64, 256]),
        ("bert_large", ["bf16", "tf32", "fp32"], [1, 4, 16, 64]),
        ("mnist_mlp", ["fp32"], [1, 4, 16, 64, 256, 1024, 4096]),
        ("gpt2", ["bf16", "tf32"], [1, 4, 16]),
        ("bert_base", ["bf16", "tf32"], [1, 8, 64]),
        ("vgg16", ["bf16", "tf32"], [1, 16, 128]),
    ]
    if args.quick:
        plan = [(m, p[:2], b[:2]) for m, p, b in plan]
    if args.points:
        plan = [(m, [p], [int(b)]) for m, p, b in (x.split(":") for x in args.points.split(","))]
    rows = []
    for name, precs, batches in plan:
        for prec in precs:
            for b in batches:
                if left_s() < 0.45 * args.budget_s:
                    log("train: budget spent, skipping", name, prec, b)
                    continue
                try:
                    steps = 10 if name == "mnist_mlp" else 8
                    med, mn, peak, n_params, _ = train_point(name, prec, b, steps)
                    rows.append([GPU_NAME, name, prec, b, steps, f"{1e3 * med:.4f}",
                                 f"{1e3 * mn:.4f}", f"{b / med:.3f}", peak, n_params])
                    log(f"train {name} {prec} b{b}: {1e3 * med:.2f} ms, {b / med:.1f}/s, "
                        f"peak {peak / 2**30:.2f} GiB")
                except Exception as e:  # noqa: BLE001
                    log(f"train {name} {prec} b{b} failed: {e!r}")
                    traceback.print_exc(file=LOG)
                    if CUDA:
                        torch.cuda.empty_cache()
                    if "out of memory" not in str(e):
                        break
    write_csv("gpu_training_steps.csv",
              ["gpu", "model", "precision", "batch", "timed_steps", "step_ms_median", "step_ms_min",
               "samples_per_s", "peak_allocated_bytes", "parameters"], rows)


def section_profile():
    rows = []
    for name, prec, b in (("resnet50", "bf16", 64), ("resnet50", "tf32", 64),
                          ("bert_large", "bf16", 16), ("bert_large", "tf32", 16),
                          ("gpt2", "bf16", 4), ("mnist_mlp", "fp32", 64)):
        if left_s() < 0.4 * args.budget_s:
            log("profile: budget spent")
            break
        try:
            _, _, _, _, pr = train_point(name, prec, 2 if args.quick else b, 2, profile=True)
            rows += pr
            log(f"profile {name} {prec}: {len(pr)} kernel names, "
                f"{sum(r[4] for r in pr)} launches, {sum(float(r[5]) for r in pr) / 1e3:.2f} ms")
        except Exception as e:  # noqa: BLE001
            log(f"profile {name} failed: {e!r}")
            traceback.print_exc(file=LOG)
    write_csv("gpu_profile_kernels.csv",
              ["model", "precision", "batch", "kernel", "calls", "total_us"], rows)


# ---------------------------------------------------------------- kernels
KDTYPES = [("fp32", torch.float32, False), ("tf32", torch.float32, True),
           ("bf16", torch.bfloat16, False)]


def section_gemm():
    shapes = sorted({(int(r["M"]), int(r["N"]), int(r["K"]), r["A_transpose"], r["B_transpose"])
                     for r in ref_rows("deepbench_train_gemm.csv")})
    if args.quick:
        shapes = [(min(m, 64), min(n, 64), min(k, 64), a, b) for m, n, k, a, b in shapes[:6]]
    rows = []
    for prec, dt, tf32 in KDTYPES:
        set_tf32(tf32)
        for m, n, k, ta, tb in shapes:
            if left_s() < 0.25 * args.budget_s:
                log("gemm: budget spent")
                break
            # C (M x N) = op(A) op(B), op(A) M x K: DeepBench's column-major operands; a
            # transposed operand is stored the other way round and viewed transposed.
            a = (torch.randn(k, m, device=DEV, dtype=dt).t() if ta == "T"
                 else torch.randn(m, k, device=DEV, dtype=dt))
            b = (torch.randn(n, k, device=DEV, dtype=dt).t() if tb == "T"
                 else torch.randn(k, n, device=DEV, dtype=dt))
            ms, how = TIMER(lambda: torch.mm(a, b))
            rows.append([GPU_NAME, prec, m, n, k, ta, tb, f"{ms:.5f}",
                         f"{2 * m * n * k / (ms * 1e-3) / 1e12:.3f}", how])
            del a, b
    set_tf32(False)
    write_csv("gpu_kernels_gemm.csv",
              ["gpu", "precision", "M", "N", "K", "A_transpose", "B_transpose", "time_ms",
               "TFLOPS", "timing"], rows)


def section_memory():
    rows = []
    sizes = [1 << e for e in (range(10, 16, 2) if args.quick else range(10, 30, 2))]

    def ops(n, dt):
        x = torch.randn(n, device=DEV, dtype=dt)
        y = torch.randn(n, device=DEV, dtype=dt)
        out = torch.empty_like(x)
        e = x.element_size()
        res = [("copy", lambda: out.copy_(x), 2 * n * e),
               ("add", lambda: torch.add(x, y, out=out), 3 * n * e),
               ("relu", lambda: torch.relu(x), 2 * n * e),
               ("gelu", lambda: F.gelu(x), 2 * n * e),
               ("dropout", lambda: F.dropout(x, 0.1, True), 2 * n * e + n),
               ("sum", lambda: x.sum(), n * e)]
        for width in (1024, 4096):
            if n >= width:
                r = x.view(-1, width)
                w = torch.ones(width, device=DEV, dtype=dt)
                res.append((f"layer_norm_w{width}", lambda r=r, w=w, width=width:
                            F.layer_norm(r, (width,), w, w), 2 * n * e))
        for width in (128, 1024):
            if n >= width:
                r = x.view(-1, width)
                res.append((f"softmax_w{width}", lambda r=r: torch.softmax(r, -1), 2 * n * e))
        return res

    for prec, dt in (("fp32", torch.float32), ("bf16", torch.bfloat16)):
        for n in sizes:
            if left_s() < 0.2 * args.budget_s:
                log("memory: budget spent")
                break
            for op, fn, nbytes in ops(n, dt):
                ms, how = TIMER(fn)
                rows.append([GPU_NAME, prec, op, n, nbytes, f"{ms:.5f}",
                             f"{nbytes / (ms * 1e-3) / 1e9:.2f}", how])
    write_csv("gpu_kernels_memory.csv",
              ["gpu", "precision", "op", "elements", "bytes_moved", "time_ms", "GB_per_s",
               "timing"], rows)


def conv_shapes():
    """DeepBench's training convolutions (W H C N K S R pad_w pad_h stride_w stride_h), each once."""
    keys = "W H C N K S_filter_w R_filter_h pad_w pad_h stride_w stride_h".split()
    shapes = sorted({tuple(int(r[k]) for k in keys) for r in ref_rows("deepbench_train_conv.csv")})
    if args.quick:
        shapes = [(min(w, 16), min(h, 16), min(c, 8), 2, min(k, 8), s, r, pw, ph, sw, sh_)
                  for w, h, c, n, k, s, r, pw, ph, sw, sh_ in shapes[:4]]
    return shapes


def conv_passes(shape, dt, fmt):
    """One convolution's output size and its three passes as PyTorch runs them (forward, data
    gradient, weight gradient), on random tensors of dtype dt in memory format fmt; None where its
    output would be empty."""
    W, H, C, N, K, S, R, pw, ph, sw, sh_ = shape
    P, Q = (H + 2 * ph - R) // sh_ + 1, (W + 2 * pw - S) // sw + 1
    if P <= 0 or Q <= 0:
        return None
    x = torch.randn(N, C, H, W, device=DEV, dtype=dt).contiguous(memory_format=fmt)
    w = torch.randn(K, C, R, S, device=DEV, dtype=dt).contiguous(memory_format=fmt)
    g = torch.randn(N, K, P, Q, device=DEV, dtype=dt).contiguous(memory_format=fmt)
    stride, padding, dilation = [sh_, sw], [ph, pw], [1, 1]

    def bwd(mask):
        return torch.ops.aten.convolution_backward(g, x, w, None, stride, padding, dilation, False,
                                                   [0, 0], 1, mask)

    return P, Q, {"fwd": lambda: F.conv2d(x, w, None, stride, padding, dilation),
                  "bwd_inputs": lambda: bwd([True, False, False]),
                  "bwd_params": lambda: bwd([False, True, False])}


def conv_format(dt):
    # fp32 and TF32 tensors NCHW (as DeepBench's conv_bench describes them), bf16 channels_last.
    return torch.channels_last if dt == torch.bfloat16 else torch.contiguous_format


def for_each_conv(section, floor, body):
    """Calls body(prec, shape, (P, Q, passes)) for every DeepBench convolution (conv_passes) in
    each dtype of KDTYPES, with cuDNN's autotuner on, until less than `floor` of the budget is
    left. A shape that fails is logged and skipped; its tensors go before the next."""
    torch.backends.cudnn.benchmark = True
    for prec, dt, tf32 in KDTYPES:
        set_tf32(tf32)
        for shape in conv_shapes():
            if left_s() < floor * args.budget_s:
                log(f"{section}: budget spent")
                break
            case = None
            try:
                case = conv_passes(shape, dt, conv_format(dt))
                if case is not None:
                    body(prec, shape, case)
            except Exception as e:  # noqa: BLE001
                log(f"{section} {prec} {shape} failed: {e!r}")
            finally:
                case = None  # the passes' closures hold the tensors
    set_tf32(False)


def section_conv():
    rows = []

    def measure(prec, shape, case):
        P, Q, passes = case
        timed = [TIMER(passes[k]) for k in ("fwd", "bwd_inputs", "bwd_params")]
        hows = {how for _, how in timed}
        rows.append([GPU_NAME, prec, *shape, P, Q, *(f"{t:.5f}" for t, _ in timed),
                     hows.pop() if len(hows) == 1 else "mixed"])

    for_each_conv("conv", 0.1, measure)
    write_csv("gpu_kernels_conv.csv",
              ["gpu", "precision", "W", "H", "C", "N", "K", "S_filter_w", "R_filter_h", "pad_w",
               "pad_h", "stride_w", "stride_h", "P_out", "Q_out", "fwd_ms", "bwd_inputs_ms",
               "bwd_params_ms", "timing"], rows)


def section_convkernels():
    """Which kernels cuDNN runs for each DeepBench convolution pass: the algorithm and the tile
    its autotuner (cudnn.benchmark, as in section_conv) picked, as the kernels' names say
    (implicit GEMM, Winograd, FFT, split-K, tile sizes), and each kernel's device time. The
    kernel tables' remaining shape error is these picks (README, "How far can the kernel tables'
    shape go?")."""
    rows = []

    def record(prec, shape, case):
        for what, fn in case[2].items():
            for _ in range(3):  # the first call autotunes
                fn()
            sync()
            for kname, calls, us in profiled_kernels(fn):
                rows.append([GPU_NAME, prec, *shape, what, kname, calls, f"{us:.3f}"])

    for_each_conv("convkernels", 0.05, record)
    log(f"convkernels: {len(rows)} kernel rows")
    write_csv("gpu_conv_kernels.csv",
              ["gpu", "precision", "W", "H", "C", "N", "K", "S_filter_w", "R_filter_h", "pad_w",
               "pad_h", "stride_w", "stride_h", "pass", "kernel", "calls", "total_us"], rows)


def section_lstm():
    shapes = sorted({(int(r["hidden_units"]), int(r["N"]), int(r["timesteps"]))
                     for r in ref_rows("deepbench_train_rnn.csv") if r["cell"] == "lstm"})
    if args.quick:
        shapes = [(min(h, 32), min(n, 4), min(t, 5)) for h, n, t in shapes[:3]]
    rows = []
    for prec, dt, tf32 in KDTYPES:
        set_tf32(tf32)
        for h, n, t in shapes:
            if left_s() < 0.02 * args.budget_s:
                log("lstm: budget spent")
                break
            try:
                # Inputs as wide as the hidden state (DeepBench's rnn_bench uses
                # CUDNN_SKIP_INPUT, which PyTorch's cuDNN LSTM does not expose, so here the
                # input GEMM runs: its own column says so).
                lstm = torch.nn.LSTM(h, h, 1).to(DEV, dt)
                lstm.flatten_parameters()  # one weight buffer, as cuDNN wants (no copy per call)
                x = torch.randn(t, n, h, device=DEV, dtype=dt, requires_grad=True)
                gy = torch.randn(t, n, h, device=DEV, dtype=dt)
                params = list(lstm.parameters())

                def fwd():
                    return lstm(x)[0]

                def fwd_data():
                    torch.autograd.grad(lstm(x)[0], [x], gy)

                def fwd_all():
                    torch.autograd.grad(lstm(x)[0], [x] + params, gy)

                t_f = time_ms(fwd)
                t_fd = time_ms(fwd_data)
                t_fa = time_ms(fwd_all)
                rows.append([GPU_NAME, prec, "linear", h, n, t, f"{t_f:.5f}",
                             f"{t_fd - t_f:.5f}", f"{t_fa - t_fd:.5f}", f"{t_fa:.5f}"])
            except Exception as e:  # noqa: BLE001
                log(f"lstm {prec} {(h, n, t)} failed: {e!r}")
    set_tf32(False)
    write_csv("gpu_kernels_lstm.csv",
              ["gpu", "precision", "input", "hidden_units", "N", "timesteps", "fwd_ms",
               "bwd_inputs_ms", "bwd_weights_ms", "total_ms"], rows)


def section_gap():
    """GPU time per kernel with the host out of the way: tiny kernels captured in a CUDA graph
    and replayed, so what is left is the device's own launch-to-launch gap."""
    if not CUDA:
        return
    rows = []
    x = torch.randn(256, device=DEV)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            x.add_(1e-3)
    torch.cuda.current_stream().wait_stream(s)
    for n in (100, 1000):
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for _ in range(n):
                x.add_(1e-3)
        ms = time_ms(lambda: g.replay(), min_total_ms=20)
        rows.append(["graph_replay_tiny_add", n, f"{1e3 * ms / n:.4f}"])
    # The same tiny kernels launched one by one from Python: host-bound.
    ms = time_ms(lambda: x.add_(1e-3), min_total_ms=20)
    rows.append(["eager_tiny_add", 1, f"{1e3 * ms:.4f}"])
    for r in rows:
        log("gap", *r)
    MACHINE["kernel_gap_us"] = {f"{r[0]}_{r[1]}": float(r[2]) for r in rows}
    with open(os.path.join(args.out, "gpu_env.json"), "w") as f:
        json.dump(MACHINE, f, indent=1)


TIMER = (lambda fn: (time_ms(fn), "eager")) if args.eager_kernels else time_ms_graph
SECTIONS = {"gap": section_gap, "env": section_env, "train": section_train, "profile": section_profile,
            "gemm": section_gemm, "memory": section_memory, "conv": section_conv,
            "convkernels": section_convkernels, "lstm": section_lstm}
log(f"measure_gpu: {GPU_NAME}, torch {torch.__version__}, budget {args.budget_s} s")
for s in args.sections.split(","):
    t = time.time()
    try:
        SECTIONS[s]()
    except Exception as e:  # noqa: BLE001
        log(f"section {s} failed: {e!r}")
        traceback.print_exc(file=LOG)
    log(f"section {s}: {time.time() - t:.1f} s, {left_s():.0f} s of budget left")
log("done")
