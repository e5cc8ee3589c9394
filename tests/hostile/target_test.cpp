// Hostile values of the scenario key `target` (models/scenario.cpp) and of
// `trainsim fit --model steps-to-target`: each exits 2 naming the origin, the key and the value.
#include "hostile/hostile_support.hpp"

HOSTILE("target.steps_min=0", {"simulate", "--set", R"(target={"steps_min":0,"batch_noise":1})"}, 2,
        {"target.steps_min: value 0 must be positive"})
HOSTILE("target.batch_noise=-5",
        {"simulate", "--set", R"(target={"steps_min":10,"batch_noise":-5})"}, 2,
        {"target.batch_noise: value -5 must be positive"})
HOSTILE("target.steps_min=1e300",
        {"simulate", "--set", R"(target={"steps_min":1e300,"batch_noise":1})"}, 2,
        {"target.steps_min: value 1e+300 is above the limit of 1e12"})
HOSTILE("target.batch_noise missing", {"simulate", "--set", R"(target={"steps_min":10})"}, 2,
        {"target", "batch_noise"})
HOSTILE("target.workload unknown", {"simulate", "--set", R"(target={"workload":"alexnet_mnist"})"},
        2, {"target.workload: unknown workload 'alexnet_mnist'", "resnet50_imagenet"})
HOSTILE("target.workload without a shipped fit",
        {"simulate", "--set", R"(target={"workload":"transformer_lm1b"})"}, 2,
        {"target.workload: 'transformer_lm1b': no fitted parameters are shipped yet"})
HOSTILE("target.workload beside explicit parameters",
        {"simulate", "--set", R"(target={"workload":"resnet50_imagenet","steps_min":3})"}, 2,
        {"target.steps_min: give either workload or explicit parameters, not both"})
HOSTILE("target.correlation=2",
        {"simulate", "--set",
         R"(target={"steps_min":10,"batch_noise":5,"steps_min_stderr":1,"correlation":2})"},
        2, {"target.correlation: value 2 is outside [-1, 1]"})
HOSTILE("target.correlation without a stderr",
        {"simulate", "--set", R"(target={"steps_min":10,"batch_noise":5,"correlation":0.5})"}, 2,
        {"target.correlation: needs steps_min_stderr or batch_noise_stderr"})
HOSTILE("target.repeat_weight=1.5",
        {"simulate", "--set", R"(target={"steps_min":10,"batch_noise":5,"repeat_weight":1.5})"}, 2,
        {"target.repeat_weight: value 1.5 is above 1"})
HOSTILE("target.steps_min as text",
        {"simulate", "--set", R"(target={"steps_min":"many","batch_noise":5})"}, 2,
        {"target.steps_min", "many"})
HOSTILE("target typo", {"simulate", "--set", R"(target={"steps_mim":10,"batch_noise":5})"}, 2,
        {"target", "steps_mim"})
HOSTILE("fit --model bogus", {"fit", "x.csv", "--model", "bogus"}, 2,
        {"--model bogus: expected throughput, steps-to-target or echo"})
HOSTILE("fit --split with the throughput model", {"fit", "x.csv", "--split", "halves"}, 2,
        {"--split halves: applies to --model steps-to-target only"})
HOSTILE("fit steps-to-target at one batch", {"fit", "@/s.csv", "--model", "steps-to-target"}, 2,
        {"@/s.csv: group 'all' has 1 distinct batch size(s) to fit (line(s) 2,3)",
         "S_min and B_noise need at least two"},
        {{"s.csv", "batch,steps\n64,1000\n64,1100\n"}})
HOSTILE("fit steps-to-target halves of two rows",
        {"fit", "@/s.csv", "--model", "steps-to-target", "--split", "halves"}, 2,
        {"group 'all' has 1 distinct batch size(s) to fit"},
        {{"s.csv", "batch,steps\n64,1000\n128,600\n"}})
HOSTILE("fit steps-to-target with 0 steps", {"fit", "@/s.csv", "--model", "steps-to-target"}, 2,
        {"@/s.csv:3: column 'steps': 0 must be positive"},
        {{"s.csv", "batch,steps\n64,1000\n128,0\n"}})
HOSTILE("fit steps-to-target with 1e300 steps", {"fit", "@/s.csv", "--model", "steps-to-target"}, 2,
        {"@/s.csv:2: column 'steps': 1e300 is outside the range a fit handles"},
        {{"s.csv", "batch,steps\n64,1e300\n128,5\n"}})
HOSTILE("fit steps-to-target with --relative",
        {"fit", "x.csv", "--model", "steps-to-target", "--relative"}, 2,
        {"--model steps-to-target: takes --group-col, --batch-col, --steps-col, --split"})
HOSTILE("plan --global-batches 0",
        {"plan", "--catalog", "@src/examples/plan_catalog.json", "--target", "1",
         "--global-batches", "0"},
        2, {"--global-batches 0: expected an integer from 1"})
HOSTILE("plan --global-batches 1e99",
        {"plan", "--catalog", "@src/examples/plan_catalog.json", "--target", "1",
         "--global-batches", "1024,1e99"},
        2, {"--global-batches 1e99: expected an integer"})
HOSTILE("plan --global-batches the layout cannot split",
        {"plan", "--catalog", "@src/examples/plan_catalog.json", "--target", "1",
         "--global-batches", "1000"},
        2, {"--global-batches 1000", "global_batch: 1000 is not a multiple of batch_per_replica"})
HOSTILE("fit --model echo without --batch-noise", {"fit", "x.csv", "--model", "echo"}, 2,
        {"--model echo: needs --batch-noise"})
HOSTILE("fit --model echo without a baseline row",
        {"fit", "@/e.csv", "--model", "echo", "--batch-noise", "100"}, 2,
        {"@/e.csv:3: no echo-1 row at batch 128 to compare with"},
        {{"e.csv", "batch,echo,fresh_examples\n64,1,1000\n128,2,700\n"}})
HOSTILE("fit --model echo with echo factor 0.5",
        {"fit", "@/e.csv", "--model", "echo", "--batch-noise", "100"}, 2,
        {"@/e.csv:3: column 'echo': '0.5' is not an echo factor"},
        {{"e.csv", "batch,echo,fresh_examples\n64,1,1000\n64,0.5,700\n"}})
HOSTILE("fit --model echo with only echo 1",
        {"fit", "@/e.csv", "--model", "echo", "--batch-noise", "100"}, 2,
        {"@/e.csv: no rows with an echo factor above 1"},
        {{"e.csv", "batch,echo,fresh_examples\n64,1,1000\n128,1,700\n"}})
HOSTILE("fit --batch-noise with the throughput model", {"fit", "x.csv", "--batch-noise", "5"}, 2,
        {"--batch-noise 5: applies to --model echo only"})
HOSTILE("simulate --price-per-gpu-hour -1", {"simulate", "--price-per-gpu-hour", "-1"}, 2,
        {"--price-per-gpu-hour -1: expected a number above 0 up to 1e+06"})
HOSTILE("simulate --price-per-gpu-hour 1e9", {"simulate", "--price-per-gpu-hour", "1e9"}, 2,
        {"--price-per-gpu-hour 1e9: expected a number above 0 up to 1e+06"})
HOSTILE("sweep --price-per-gpu-hour abc",
        {"sweep", "--vary", "steps=3", "--price-per-gpu-hour", "abc"}, 2,
        {"--price-per-gpu-hour abc: expected a number"})
