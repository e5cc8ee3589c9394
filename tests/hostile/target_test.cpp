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
        {"simulate", "--set", R"(target={"workload":"resnet50_imagenet"})"}, 2,
        {"target.workload: 'resnet50_imagenet': no fitted parameters are shipped yet"})
HOSTILE("target.workload beside explicit parameters",
        {"simulate", "--set", R"(target={"workload":"resnet50_imagenet","steps_min":3})"}, 2,
        {"target.workload"})
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
        {"--model bogus: expected throughput or steps-to-target"})
HOSTILE("fit --split with the throughput model", {"fit", "x.csv", "--split", "halves"}, 2,
        {"--split halves: applies to --model steps-to-target only"})
