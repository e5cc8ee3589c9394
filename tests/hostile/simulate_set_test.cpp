// Hostile --set overrides and options of `trainsim simulate` (the built-in demo scenario).
#include "hostile/hostile_support.hpp"

namespace {
const char* const kDemo = "<built-in>/examples/resnet50_dgx_a100.json";
}

HOSTILE("steps=100000000 is refused at once", {"simulate", "--set", "steps=100000000"}, 2,
        {"--set steps=100000000", kDemo, "steps: value 100000000 is above the limit of 10000"})
HOSTILE("steps=1e999", {"simulate", "--set", "steps=1e999"}, 2,
        {"--set steps=1e999: number 1e999 is out of range"})
HOSTILE("steps=0", {"simulate", "--set", "steps=0"}, 2, {"steps: value 0 must be at least 1"})
HOSTILE("steps=-5", {"simulate", "--set", "steps=-5"}, 2, {"steps: value -5 must be at least 1"})
HOSTILE("steps=abc", {"simulate", "--set", "steps=abc"}, 2,
        {"--set steps=abc", "steps: expected an integer, got \"abc\""})
HOSTILE("steps=1.5", {"simulate", "--set", "steps=1.5"}, 2, {"steps: expected an integer, got 1.5"})
HOSTILE("steps=true", {"simulate", "--set", "steps=true"}, 2,
        {"steps: expected an integer, got true"})
HOSTILE("steps=null", {"simulate", "--set", "steps=null"}, 2, {"steps: expected an integer"})
HOSTILE("steps=[1]", {"simulate", "--set", "steps=[1]"}, 2, {"steps: expected an integer, got [1]"})
HOSTILE("dilated_conv_tensor_cores=1", {"simulate", "--set", "dilated_conv_tensor_cores=1"}, 2,
        {"--set dilated_conv_tensor_cores=1", "dilated_conv_tensor_cores: expected true or false"})
HOSTILE("memory_format=nhwc", {"simulate", "--set", "memory_format=nhwc"}, 2,
        {"--set memory_format=nhwc", kDemo,
         "memory_format: value \"nhwc\" is not one of channels_first|channels_last"})
HOSTILE("warmup as long as the run", {"simulate", "--set", "warmup_steps=8"}, 2,
        {"warmup_steps: must be smaller than steps (8)"})
HOSTILE("warmup_steps=1e9", {"simulate", "--set", "warmup_steps=1e9"}, 2,
        {"warmup_steps: value 1000000000 is above the limit of 10000"})
HOSTILE("cluster.nodes=1e9 is an integer, above the cluster limit",
        {"simulate", "--set", "cluster.nodes=1e9"}, 2,
        {"--set cluster.nodes=1e9", "cluster.nodes: value 1000000000 is above the limit of 262144"})
HOSTILE("cluster.nodes=1e5 makes too many accelerators",
        {"simulate", "--set", "cluster=dgx-a100-x4", "--set", "cluster.nodes=100000"}, 2,
        {"cluster.nodes", "800000 accelerators, above the limit of 262144"})
HOSTILE("8e9 ranks",
        {"simulate", "--set", "cluster=dgx-a100-x4", "--set", "cluster.nodes=1e9", "--set",
         "parallelism.data=8e9"},
        2, {"cluster.nodes: value 1000000000 is above the limit"})
HOSTILE("parallelism.data=8e9", {"simulate", "--set", "parallelism.data=8e9"}, 2,
        {"--set parallelism.data=8e9", "parallelism.data: value 8000000000 is above the limit"})
HOSTILE("pipeline=100 blames the --set, not the file's data",
        {"simulate", "--set", "parallelism.pipeline=100"}, 2,
        {"--set parallelism.pipeline=100", "parallelism.pipeline: data x pipeline = 8 x 100 = 800",
         "parallelism.data 8 from <built-in>/examples/resnet50_dgx_a100.json",
         "parallelism.pipeline 100 from --set parallelism.pipeline=100"})
HOSTILE("data=16 on 8 devices blames data", {"simulate", "--set", "parallelism.data=16"}, 2,
        {"--set parallelism.data=16", "parallelism.data: data x pipeline = 16 x 1 = 16 devices",
         "but the cluster has 8"})
HOSTILE("microbatches=1e9", {"simulate", "--set", "parallelism.microbatches=1e9"}, 2,
        {"parallelism.microbatches: value 1000000000 is above the limit of 1048576"})
HOSTILE("grad_accum=1e7", {"simulate", "--set", "parallelism.grad_accum=1e7"}, 2,
        {"parallelism.grad_accum: value 10000000 is above the limit of 1048576"})
HOSTILE("microbatches x steps above the event limit",
        {"simulate", "--set", "parallelism.data=4", "--set", "parallelism.pipeline=2", "--set",
         "parallelism.microbatches=128", "--set", "steps=10000"},
        2,
        {kDemo, "the run would execute about", "events", "microbatches 128",
         "above the limit of 1e+08"})
// Long gradient accumulation costs 4 + 5 simulated micro-steps, extended linearly (exact in the
// steady state), so it is no longer a large run.
HOSTILE("grad_accum 100000 runs as 9 micro-steps",
        {"simulate", "--set", "parallelism.grad_accum=100000", "--set", "steps=100"}, 0,
        {"steps extended linearly from 4 and 5"})
HOSTILE("microbatches above the batch", {"simulate", "--set", "parallelism.microbatches=300"}, 2,
        {"parallelism.microbatches: 300 micro-batches cannot split batch_per_replica 256"})
HOSTILE("batch_per_replica=1e9", {"simulate", "--set", "batch_per_replica=1e9"}, 2,
        {"batch_per_replica: value 1000000000 is above the limit of 16777216"})
HOSTILE("batch_per_replica=0", {"simulate", "--set", "batch_per_replica=0"}, 2,
        {"batch_per_replica: value 0 must be at least 1"})
HOSTILE("batch_per_replica=most", {"simulate", "--set", "batch_per_replica=most"}, 2,
        {"batch_per_replica: value \"most\" is not one of max"})
HOSTILE("echo factor 1e7 is refused at once", {"simulate", "--set", "input.echo.factor=1e7"}, 2,
        {"--set input.echo.factor=1e7",
         "input.echo.factor: value 10000000 is above the limit of 1024"})
HOSTILE("echo factor 0", {"simulate", "--set", "input.echo.factor=0"}, 2,
        {"input.echo.factor: value 0 must be at least 1"})
HOSTILE("echo before augment with batch mode",
        {"simulate", "--set", "input.echo.factor=2", "--set", "input.echo.insert=before_augment"},
        2, {"input.echo.insert: before_augment needs mode example"})
HOSTILE("prefetch_batches=1e6", {"simulate", "--set", "input.prefetch_batches=1e6"}, 2,
        {"input.prefetch_batches: value 1000000 is above the limit of 1024"})
HOSTILE("workers=1e6", {"simulate", "--set", "input.workers=1e6"}, 2,
        {"input.workers: value 1000000 is above the limit of 65536"})
HOSTILE("more workers than host cores", {"simulate", "--set", "input.workers=1000"}, 2,
        {"input.workers: 1000 input workers, but host dual-epyc-7742 has 128 CPU cores"})
HOSTILE("global_batch=1e15", {"simulate", "--set", "global_batch=1e15"}, 2,
        {"global_batch: value 1000000000000000 is above the limit"})
HOSTILE("global_batch not a multiple", {"simulate", "--set", "global_batch=3000"}, 2,
        {"global_batch: 3000 is not a multiple of batch_per_replica x data = 2048"})
HOSTILE("global_batch with grad_accum",
        {"simulate", "--set", "global_batch=4096", "--set", "parallelism.grad_accum=2"}, 2,
        {"global_batch: give either global_batch or parallelism.grad_accum"})
HOSTILE("global_batch that needs 1e6 accumulation rounds",
        {"simulate", "--set", "global_batch=20480000000"}, 2,
        {"global_batch: 20480000000 / (batch_per_replica x data = 2048) = 10000000 accumulation "
         "rounds, above the limit of 1048576"})
HOSTILE("description=5", {"simulate", "--set", "description=5"}, 2,
        {"--set description=5", "description: expected a string, got 5"})
HOSTILE("resolution=1 collapses ResNet-50", {"simulate", "--set", "model.resolution=1"}, 2,
        {"--set model.resolution=1", "model.resolution: value 1 is too small for resnet50",
         "the smallest resolution that keeps them is 17"})
HOSTILE("resolution=16 collapses the last stage", {"simulate", "--set", "model.resolution=16"}, 2,
        {"model.resolution: value 16 is too small for resnet50"})
HOSTILE("resolution=200000", {"simulate", "--set", "model.resolution=200000"}, 2,
        {"--set model.resolution=200000",
         "model.resolution: value 200000 is above the limit of 131072"})
HOSTILE("resolution=5e117 (found by fuzz_json_document)",
        {"simulate", "--set", "model.resolution=5e117"}, 2,
        {"model.resolution: value 5e+117 is above the limit of 131072"})
HOSTILE("resolution=2.5", {"simulate", "--set", "model.resolution=2.5"}, 2,
        {"model.resolution", "resolution=2.5 must be a positive integer"})
HOSTILE("resolution=-224", {"simulate", "--set", "model.resolution=-224"}, 2,
        {"model.resolution: value -224 must be positive"})
HOSTILE("resolution 17 is the smallest ResNet-50 keeps",
        {"simulate", "--set", "model.resolution=17", "--format", "json"}, 0,
        {"\"model\": \"resnet50\""})
HOSTILE("unknown model names the --set", {"simulate", "--set", "model=resnet5"}, 2,
        {"--set model=resnet5", "unknown model 'resnet5' (did you mean 'resnet50'?)"})
HOSTILE("unknown hyper-parameter", {"simulate", "--set", "model.depth=5"}, 2,
        {"--set model.depth=5", "model 'resnet50' has no hyper-parameter 'depth'"})
HOSTILE("precision fp8 on an accelerator without fp8", {"simulate", "--set", "precision=fp8"}, 2,
        {"precision: accelerator a100-sxm4-40gb has no fp8 compute path"})
HOSTILE("precision fp9", {"simulate", "--set", "precision=fp9"}, 2,
        {"precision: value \"fp9\" is not one of fp32|tf32|fp16|bf16|fp8"})
HOSTILE("precision the accelerator lacks",
        {"simulate", "--set", "cluster=gtopk-32x-p102-1gbe", "--set", "parallelism.data=32"}, 2,
        {"precision: accelerator p102-100 has no fp16 compute path"})
HOSTILE("unknown cluster with a suggestion", {"simulate", "--set", "cluster=dgx-a10"}, 2,
        {"--set cluster=dgx-a10", "unknown cluster profile \"dgx-a10\" (did you mean 'dgx-a100'?)"})
HOSTILE("unknown accelerator inside the cluster",
        {"simulate", "--set", "cluster.node.accelerator=a100-sxm9"}, 2,
        {"--set cluster.node.accelerator=a100-sxm9", "unknown accelerator profile \"a100-sxm9\""})
HOSTILE("peak 1e-300 FLOP/s overflows simulated time",
        {"simulate", "--set", "cluster.node.accelerator.peak_flops.fp16=1e-300"}, 2,
        {"a simulated time is beyond the engine's range", "accelerator a100-sxm4-40gb"})
// Infinitely fast hardware with a framework that dispatches for free: the step is what NCCL's
// per-hop protocol latencies leave (finite, positive), never 0 s, inf or NaN.
HOSTILE("everything infinitely fast leaves the collective latencies",
        {"simulate",
         "--set",
         "framework=pytorch_eager",
         "--set",
         "cluster.node.accelerator.peak_flops.fp16=1e300",
         "--set",
         "cluster.node.accelerator.memory_bandwidth=1e300",
         "--set",
         "cluster.node.accelerator.kernel_launch_overhead=0",
         "--set",
         "input.enabled=false",
         "--set",
         "cluster.node.intra.link.latency=0",
         "--set",
         "cluster.node.intra.link.bandwidth=1e300",
         "--set",
         "communication.overlap=false",
         "--set",
         "framework.host.forward_per_kernel=0",
         "--set",
         "framework.host.backward_per_kernel=0",
         "--set",
         "framework.host.optimizer_per_kernel=0",
         "--set",
         "framework.host.per_step=0"},
        0, {"step time"})
HOSTILE("a memory capacity of 1e300 bytes",
        {"simulate", "--set", "cluster.node.accelerator.memory_capacity=1e300"}, 0,
        {"(fits); largest batch that fits 16777216"})
HOSTILE("negative peak",
        {"simulate", "--set", "cluster.node.accelerator.peak_flops.fp16=-5 TFLOP/s"}, 2,
        {"peak_flops.fp16: value \"-5 TFLOP/s\" must be positive"})
HOSTILE("efficiency 0",
        {"simulate", "--set", "cluster.node.accelerator.kernels.compute.conv.fp16=0"}, 2,
        {"kernels.compute.conv.fp16: value 0 must be in (0, 1]"})
HOSTILE("efficiency 1.5",
        {"simulate", "--set", "cluster.node.accelerator.kernels.compute.conv.fp16=1.5"}, 2,
        {"kernels.compute.conv.fp16: value 1.5 must be in (0, 1]"})
HOSTILE("bandwidth 1e300 EB/s is not finite",
        {"simulate", "--set", "cluster.node.accelerator.memory_bandwidth=1e300 EB/s"}, 2,
        {"memory_bandwidth: value \"1e300 EB/s\" is out of range"})
HOSTILE("bandwidth 1e999 GB/s",
        {"simulate", "--set", "cluster.node.accelerator.memory_bandwidth=1e999 GB/s"}, 2,
        {"memory_bandwidth: value \"1e999 GB/s\" is out of range"})
HOSTILE("bandwidth with a wrong unit",
        {"simulate", "--set", "cluster.node.accelerator.memory_bandwidth=5 GB"}, 2,
        {"memory_bandwidth: value \"5 GB\" is not a bandwidth"})
HOSTILE("bucket size 0", {"simulate", "--set", "communication.bucket_size=0"}, 2,
        {"communication.bucket_size: value 0 must be positive"})
HOSTILE("density 2", {"simulate", "--set", "communication.density=2"}, 2,
        {"communication.density: value 2 must be in (0, 1]"})
HOSTILE("unknown algorithm", {"simulate", "--set", "communication.algorithm=rng"}, 2,
        {"communication.algorithm: value \"rng\" is not one of", "(did you mean 'ring'?)"})
HOSTILE("--set with a value nested 100 deep",
        {"simulate", "--set", "cluster=" + trainsim::test::deep_array(100)}, 2,
        {"nested deeper than the limit of 64 levels"})
HOSTILE("--set with a duplicate key", {"simulate", "--set", R"(cluster={"nodes":1,"nodes":2})"}, 2,
        {"--set cluster={\"nodes\":1,\"nodes\":2}: key 'nodes' appears twice"})
HOSTILE("--set path of 100 components",
        {"simulate", "--set",
         [] {
           std::string p = "a";
           for (int i = 0; i < 99; ++i)
             p += ".a";
           return p + "=1";
         }()},
        2, {"components, more than the limit of 64"})
HOSTILE("--set without a path", {"simulate", "--set", "=5"}, 2, {"--set =5: expected PATH=VALUE"})
HOSTILE("--set without a value separator", {"simulate", "--set", "steps"}, 2,
        {"--set steps: expected PATH=VALUE"})
HOSTILE("--set with an empty component", {"simulate", "--set", "input..workers=2"}, 2,
        {"empty component in path 'input..workers'"})
HOSTILE("--set through a number", {"simulate", "--set", "steps.x=1"}, 2,
        {"cannot set 'steps.x': 'steps' is number, not an object"})
HOSTILE("--set value that is not UTF-8", {"simulate", "--set", "name=\xff\xfe"}, 2,
        {"argument 3 is not valid UTF-8 text"})
HOSTILE("--set key holding a newline", {"simulate", "--set", "x\ny=1"}, 2, {"unknown key 'x\\ny'"})
HOSTILE("steps=1e1 is accepted", {"simulate", "--set", "steps=1e1", "--format", "json"}, 0,
        {"\"step_time_s\""})
HOSTILE("cluster.nodes=1.0 is accepted",
        {"simulate", "--set", "cluster.nodes=1.0", "--format", "csv"}, 0, {"step_time_s"})
HOSTILE("--format xml", {"simulate", "--format", "xml"}, 2,
        {"--format xml: expected text, json or csv"})
HOSTILE("--trace into a missing folder", {"simulate", "--trace", "@/no/such/dir/t.json"}, 2,
        {"--trace @/no/such/dir/t.json: cannot open the file for writing"})
HOSTILE("--trace onto a folder", {"simulate", "--trace", "@/"}, 2,
        {"cannot open the file for writing"})
HOSTILE("--trace of a run too large to trace",
        {"simulate", "--trace", "@/t.json", "--set", "steps=10000"}, 2,
        {"--trace of a run of about", "above the trace limit of 2e+06 events"})
HOSTILE("unknown option", {"simulate", "--bogus"}, 2,
        {"trainsim simulate: unrecognised option '--bogus'"})
HOSTILE("two scenario files",
        {"simulate", "@src/examples/resnet50_dgx_a100.json", "@src/examples/two_gpu_no_p2p.json"},
        2, {"trainsim simulate:", "too many positional options"})
HOSTILE("--profile-dir that does not exist", {"simulate", "--profile-dir", "@/none"}, 2,
        {"--profile-dir @/none: profile folder does not exist"})
HOSTILE("--profile-dir that is a file",
        {"simulate", "--profile-dir", "@src/examples/resnet50_dgx_a100.json"}, 2,
        {"is a file, not a folder of profiles"})
HOSTILE("workspace -1 GB", {"simulate", "--set", "workspace=-1 GB"}, 2,
        {"workspace: value \"-1 GB\" must not be negative"})
HOSTILE("mode training", {"simulate", "--set", "mode=training"}, 2,
        {"mode: value \"training\" is not one of train|inference"})
HOSTILE("balance that does not sum to the layers",
        {"simulate", "@src/examples/gpipe_amoebanet_tpu.json", "--set",
         "parallelism.balance=[9,14]"},
        2, {"parallelism.balance: layer counts sum to 23, but model amoebanet_d has 24 layers"})
HOSTILE("balance entries above the layer count",
        {"simulate", "@src/examples/gpipe_amoebanet_tpu.json", "--set",
         "parallelism.balance=[1e9,1]"},
        2, {"parallelism.balance: element 1000000000 is above the limit of 24"})
HOSTILE("pipeline deeper than the model",
        {"simulate", "@src/examples/gpipe_amoebanet_tpu.json", "--set", "parallelism.pipeline=100"},
        2, {"parallelism.pipeline: 100 stages, but model amoebanet_d has only 24 layers"})
HOSTILE("--verbose is accepted", {"simulate", "--verbose", "--format", "json"}, 0,
        {"\"throughput_samples_per_s\""})

// The device mesh (issue 15): tensor, sequence, ZeRO and interleaving keys.
HOSTILE("tensor parallelism on a conv net",
        {"simulate", "--set", "parallelism.tensor=2", "--set", "parallelism.data=4"}, 2,
        {"--set parallelism.tensor=2", "parallelism.tensor", "resnet50", "no transformer entries"})
HOSTILE("tensor degree not dividing the heads",
        {"simulate", "--set", "model=gpt3_1_3b", "--set", "parallelism.tensor=3", "--set",
         "parallelism.data=2"},
        2, {"parallelism.tensor", "heads=16 is not divisible by tp=3"})
HOSTILE("zero stage 4", {"simulate", "--set", "parallelism.zero=4"}, 2,
        {"parallelism.zero", "above the limit of 3"})
HOSTILE("zero 2 with a pipeline",
        {"simulate", "--set", "parallelism.zero=2", "--set", "parallelism.pipeline=2", "--set",
         "parallelism.data=4"},
        2, {"parallelism.zero", "cannot be combined with parallelism.pipeline > 1"})
HOSTILE("interleaving without a pipeline", {"simulate", "--set", "parallelism.virtual_stages=2"}, 2,
        {"parallelism.virtual_stages", "needs parallelism.pipeline > 1"})
HOSTILE("interleaving with gpipe",
        {"simulate", "--set", "parallelism.pipeline=2", "--set", "parallelism.data=4", "--set",
         "parallelism.microbatches=2", "--set", "parallelism.virtual_stages=2"},
        2, {"parallelism.virtual_stages", "needs parallelism.schedule \"1f1b\""})
HOSTILE("interleaving with micro-batches not a multiple of the stages",
        {"simulate", "--set", "parallelism.pipeline=2", "--set", "parallelism.data=4", "--set",
         "parallelism.microbatches=3", "--set", "parallelism.schedule=1f1b", "--set",
         "parallelism.virtual_stages=2"},
        2, {"parallelism.virtual_stages", "multiple of parallelism.pipeline (2)"})
HOSTILE("more chunks than layers",
        {"simulate", "--set", "parallelism.pipeline=2", "--set", "parallelism.data=4", "--set",
         "parallelism.microbatches=2", "--set", "parallelism.schedule=1f1b", "--set",
         "parallelism.virtual_stages=200"},
        2, {"parallelism.virtual_stages", "2 stages x 200 chunks", "layers"})
HOSTILE("recompute mode unknown", {"simulate", "--set", "recompute=partial"}, 2,
        {"recompute", "not one of none|selective|full"})
HOSTILE("gradient clipping mode unknown", {"simulate", "--set", "gradient_clipping=always"}, 2,
        {"gradient_clipping", "\"always\"", "not one of none|per_tensor|foreach"})
HOSTILE("gradient clipping on an imported workload's measured optimizer",
        {"simulate", "@src/examples/imported_mlp_64xh100.json", "--set",
         "gradient_clipping=per_tensor"},
        2, {"gradient_clipping", "imported workload", "measured optimizer kernels"})
HOSTILE("JITLamb misspelt", {"simulate", "--set", "optimizer=jitlamb"}, 2,
        {"optimizer", "\"jitlamb\"", "did you mean 'jit_lamb'"})
HOSTILE("mesh larger than the cluster",
        {"simulate", "--set", "model=gpt3_1_3b", "--set", "parallelism.data=2", "--set",
         "parallelism.tensor=8"},
        2,
        {"parallelism.data",
         "data x pipeline x tensor = 2 x 1 x 8 = 16 devices, but the cluster has 8"})
HOSTILE("unknown mesh order", {"simulate", "--set", "parallelism.order=pp-dp-tp"}, 2,
        {"parallelism.order", "not one of tp-dp-pp|tp-pp-dp|dp-tp-pp"})
HOSTILE("sparsified exchange with tensor parallelism",
        {"simulate", "--set", "model=gpt3_1_3b", "--set", "parallelism.tensor=2", "--set",
         "parallelism.data=4", "--set", "communication.compression=topk"},
        2, {"communication.compression", "data parallelism only"})
