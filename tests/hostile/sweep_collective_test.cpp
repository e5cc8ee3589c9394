// Hostile --vary axes and options of `trainsim sweep`, and of `trainsim collective`.
#include "hostile/hostile_support.hpp"

HOSTILE("sweep range of 1e8 values", {"sweep", "--vary", "steps=1..100000000"}, 2,
        {"--vary steps=1..100000000: range '1..100000000' has more than 100000 values"})
HOSTILE("sweep of more than 100,000 rows",
        {"sweep", "--vary", "steps=1..1000", "--vary", "batch_per_replica=1..1000"}, 2,
        {"--vary batch_per_replica=1..1000: the sweep would have more than 100000 rows"})
HOSTILE("sweep value 1e999 names the row", {"sweep", "--vary", "steps=4,1e999"}, 2,
        {"sweep row 2 of 2 (steps=1e999)", "number 1e999 is out of range"})
HOSTILE("sweep value above a limit names the row", {"sweep", "--vary", "steps=4,100000000"}, 2,
        {"sweep row 2 of 2 (steps=100000000)",
         "steps: value 100000000 is above the limit of 10000"})
HOSTILE("sweep row above the event limit fails before any simulation",
        {"sweep", "--vary", "parallelism.microbatches=1,128", "--set", "parallelism.data=4",
         "--set", "parallelism.pipeline=2", "--set", "steps=10000"},
        2, {"sweep row 2 of 2 (parallelism.microbatches=128)", "the run would execute about"})
HOSTILE("sweep --jobs 0", {"sweep", "--vary", "steps=3", "--jobs", "0"}, 2,
        {"--jobs 0: expected an integer from 1 to 1024"})
HOSTILE("sweep --jobs 100000", {"sweep", "--vary", "steps=3", "--jobs", "100000"}, 2,
        {"--jobs 100000: expected an integer from 1 to 1024"})
HOSTILE("sweep --jobs abc", {"sweep", "--vary", "steps=3", "--jobs", "abc"}, 2,
        {"--jobs abc: expected an integer"})
HOSTILE("sweep --vary without =", {"sweep", "--vary", "steps"}, 2,
        {"--vary steps: expected PATH=V1,V2,..."})
HOSTILE("sweep --vary with an empty value", {"sweep", "--vary", "steps=3,,4"}, 2,
        {"--vary steps=3,,4: empty value in the list"})
HOSTILE("sweep bad range", {"sweep", "--vary", "steps=1..x"}, 2,
        {"--vary steps=1..x: bad range '1..x'"})
HOSTILE("sweep descending range", {"sweep", "--vary", "steps=5..1"}, 2,
        {"range '5..1' ends below its start"})
HOSTILE("sweep geometric factor 1", {"sweep", "--vary", "steps=1..8x1"}, 2,
        {"a geometric range needs start > 0 and factor > 1"})
HOSTILE("sweep range of 1e-300 steps", {"sweep", "--vary", "input.decode_per_sample=0..1+1e-300"},
        2, {"has more than 100000 values"})
HOSTILE("sweep path varied twice", {"sweep", "--vary", "steps=3", "--vary", "steps=4"}, 2,
        {"path 'steps' is varied twice"})
HOSTILE("sweep --out onto a folder",
        {"sweep", "--vary", "steps=3", "--set", "warmup_steps=1", "--out", "@/"}, 2,
        {"cannot open the file for writing"})
HOSTILE("sweep --format xml", {"sweep", "--vary", "steps=3", "--format", "xml"}, 2,
        {"--format xml: expected csv or json"})
HOSTILE("sweep duplicate key in a value", {"sweep", "--vary", R"(cluster={"nodes":1,"nodes":2})"},
        2, {"key 'nodes' appears twice"})
HOSTILE("sweep without --vary", {"sweep"}, 2, {"vary"})
HOSTILE("a small sweep works",
        {"sweep", "--vary", "steps=3,4", "--set", "warmup_steps=1", "--set", "model=resnet20",
         "--set", "batch_per_replica=32"},
        0, {"vary.steps", "\n3,", "\n4,"})

HOSTILE("collective --ranks 0",
        {"collective", "--cluster", "dgx-a100", "--bytes", "1MB", "--ranks", "0"}, 2,
        {"--ranks 0: expected at least 1 rank"})
HOSTILE("collective --ranks beyond the cluster",
        {"collective", "--cluster", "dgx-a100", "--bytes", "1MB", "--ranks", "9"}, 2, {"--ranks"})
HOSTILE("collective --chunks 0",
        {"collective", "--cluster", "dgx-a100", "--bytes", "1MB", "--chunks", "0"}, 2,
        {"--chunks 0: expected 1 to 4096 chunks"})
HOSTILE("collective --chunks 100000000 is refused at once",
        {"collective", "--cluster", "dgx-a100", "--bytes", "1MB", "--chunks", "100000000"}, 2,
        {"--chunks 100000000: expected 1 to 4096 chunks"})
HOSTILE("collective chunks x ranks above the limit",
        {"collective", "--cluster", "dgx-a100-x4", "--bytes", "1GiB", "--chunks", "4096"}, 2,
        {"--chunks 4096: 4096 chunks x 32 ranks is above the limit of 65536"})
HOSTILE("collective more chunks than elements",
        {"collective", "--cluster", "dgx-a100", "--bytes", "8", "--chunks", "4"}, 2,
        {"--chunks 4: more chunks than the 2 fp32 elements of --bytes 8"})
HOSTILE("collective --density with ring",
        {"collective", "--cluster", "dgx-a100", "--bytes", "1MB", "--density", "0.1"}, 2,
        {"--density 0.1: applies only to --algorithm topk or gtopk, not ring"})
HOSTILE("collective 3 bytes of fp32", {"collective", "--cluster", "dgx-a100", "--bytes", "3"}, 2,
        {"--bytes 3: is not a whole number of fp32 elements (4 bytes each)"})
HOSTILE("collective 3 bytes of fp16",
        {"collective", "--cluster", "dgx-a100", "--bytes", "3", "--dtype", "fp16"}, 2,
        {"--bytes 3: is not a whole number of fp16 elements (2 bytes each)"})
HOSTILE("collective 2 PB per rank", {"collective", "--cluster", "dgx-a100", "--bytes", "2PB"}, 2,
        {"--bytes 2PB: above the limit of 1 TiB per rank"})
HOSTILE("collective 0 bytes", {"collective", "--cluster", "dgx-a100", "--bytes", "0"}, 2,
        {"--bytes 0: expected a positive size"})
HOSTILE("collective -1 bytes", {"collective", "--cluster", "dgx-a100", "--bytes", "-1"}, 2,
        {"--bytes -1: expected a positive size"})
HOSTILE("collective bytes abc", {"collective", "--cluster", "dgx-a100", "--bytes", "abc"}, 2,
        {"--bytes abc: expected a size"})
HOSTILE("collective bytes 1e999", {"collective", "--cluster", "dgx-a100", "--bytes", "1e999"}, 2,
        {"--bytes 1e999"})
HOSTILE("collective bytes nan", {"collective", "--cluster", "dgx-a100", "--bytes", "nan"}, 2,
        {"--bytes nan"})
HOSTILE("collective sweep of odd sizes", {"collective", "--cluster", "dgx-a100", "--sweep", "3:16"},
        2, {"--sweep 3:16: is not a whole number of fp32 elements"})
HOSTILE("collective sweep descending", {"collective", "--cluster", "dgx-a100", "--sweep", "16:4"},
        2, {"--sweep 16:4: MAX is below MIN"})
HOSTILE("collective sweep without a colon",
        {"collective", "--cluster", "dgx-a100", "--sweep", "abc"}, 2, {"--sweep abc"})
HOSTILE("collective sweep to 1 PB", {"collective", "--cluster", "dgx-a100", "--sweep", "8:1PB"}, 2,
        {"--sweep 8:1PB: above the limit of 1 TiB per rank"})
HOSTILE("collective without --cluster", {"collective", "--bytes", "1MB"}, 2,
        {"--cluster NAME is required"})
HOSTILE("collective unknown cluster", {"collective", "--cluster", "dgx-a10", "--bytes", "1MB"}, 2,
        {"unknown cluster profile \"dgx-a10\""})
HOSTILE("collective cluster.nodes=1e9",
        {"collective", "--cluster", "dgx-a100-x4", "--bytes", "1MB", "--set", "cluster.nodes=1e9"},
        2, {"--set cluster.nodes=1e9", "cluster.nodes: value 1000000000 is above the limit"})
HOSTILE("collective set outside the cluster",
        {"collective", "--cluster", "dgx-a100", "--bytes", "1MB", "--set", "steps=3"}, 2,
        {"--set steps=3: collective overrides start with 'cluster.'"})
HOSTILE("collective unknown op",
        {"collective", "--cluster", "dgx-a100", "--bytes", "1MB", "--op", "alltoallv"}, 2,
        {"--op alltoallv"})
HOSTILE("collective unknown algorithm",
        {"collective", "--cluster", "dgx-a100", "--bytes", "1MB", "--algorithm", "rng"}, 2,
        {"--algorithm rng"})
HOSTILE("collective unknown dtype",
        {"collective", "--cluster", "dgx-a100", "--bytes", "1MB", "--dtype", "fp8"}, 2,
        {"--dtype fp8: expected fp32, fp16 or bf16"})
HOSTILE("collective topk density 2",
        {"collective", "--cluster", "dgx-a100", "--bytes", "1MB", "--algorithm", "topk",
         "--density", "2"},
        2, {"--density 2: expected a fraction in (0, 1]"})
HOSTILE("collective topk density nan",
        {"collective", "--cluster", "dgx-a100", "--bytes", "1MB", "--algorithm", "topk",
         "--density", "nan"},
        2, {"--density nan"})
HOSTILE("collective --servers 0",
        {"collective", "--cluster", "dgx-a100", "--bytes", "1MB", "--algorithm", "parameter_server",
         "--servers", "0"},
        2, {"--servers 0: expected a positive count"})
HOSTILE("collective --bytes and --sweep",
        {"collective", "--cluster", "dgx-a100", "--bytes", "1MB", "--sweep", "8:64"}, 2,
        {"give exactly one of --bytes and --sweep"})
HOSTILE("collective --format xml",
        {"collective", "--cluster", "dgx-a100", "--bytes", "1MB", "--format", "xml"}, 2,
        {"--format xml: expected text or json"})
// Ideal links still leave NCCL's per-hop protocol latency: a finite time and bandwidth.
HOSTILE("collective on ideal links takes the protocol latency, not 0 s",
        {"collective", "--cluster", "dgx-a100", "--bytes", "4", "--set",
         "cluster.node.intra.link.latency=0", "--set", "cluster.node.intra.link.bandwidth=1e300",
         "--set", "cluster.node.accelerator.kernel_launch_overhead=0", "--set",
         "cluster.node.accelerator.memory_bandwidth=1e300", "--set",
         "cluster.collectives.base_latency=0"},
        0, {"ran          ring / LL"})
HOSTILE("collective slower than the engine's range",
        {"collective", "--cluster", "dgx-a100", "--bytes", "1TiB", "--set",
         "cluster.node.intra.link.bandwidth=1e-3"},
        2, {"a simulated time is beyond the engine's range"})
HOSTILE("a collective on one rank takes no time",
        {"collective", "--cluster", "dgx-a100", "--bytes", "1MB", "--ranks", "1"}, 0,
        {"1 ranks", "time         0 s"})
HOSTILE("collective over 2048 ranks runs phase-aggregated",
        {"collective", "--cluster", "dgx-h100-x4", "--set", "cluster.nodes=256", "--bytes", "1MB"},
        0, {"2048 ranks", "phase-aggregated"})
HOSTILE("collective --exact over 4096 ranks",
        {"collective", "--cluster", "star-1gbe", "--set", "cluster.nodes=4096", "--bytes", "1MB",
         "--exact"},
        2, {"above the limit of 1024 (drop --exact)"})
HOSTILE("a plain collective works", {"collective", "--cluster", "dgx-a100", "--bytes", "1MB"}, 0,
        {"allreduce by ring on dgx-a100: 8 ranks"})
