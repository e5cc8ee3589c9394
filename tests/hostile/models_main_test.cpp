// Hostile `trainsim models` arguments and the command line itself.
#include "hostile/hostile_support.hpp"

HOSTILE("models show resnet50 at resolution 1",
        {"models", "show", "resnet50", "--set", "resolution=1"}, 2,
        {"--set resolution=1: value 1 is too small for resnet50"})
HOSTILE("models show with a hyper-parameter of 1e9",
        {"models", "show", "gpt2", "--set", "seq_len=1e9"}, 2,
        {"--set seq_len: value 1000000000 is above the limit of 131072"})
HOSTILE("models show gpt2 with a GELU of 3 kernels",
        {"models", "show", "gpt2", "--set", "gelu_kernels=3"}, 2,
        {"cannot be built with gelu_kernels=3", "neither 1 (one fused kernel) nor 8"})
HOSTILE("models show an unknown model", {"models", "show", "resnet5"}, 2,
        {"unknown model 'resnet5' (did you mean 'resnet50'?)"})
HOSTILE("models show with a non-numeric value",
        {"models", "show", "resnet50", "--set", "resolution=abc"}, 2,
        {"--set resolution", "value 'abc' is not a number"})
HOSTILE("models show with a fractional value",
        {"models", "show", "resnet50", "--set", "resolution=2.5"}, 2,
        {"resolution=2.5 must be a positive integer"})
HOSTILE("models show with an unknown hyper-parameter",
        {"models", "show", "resnet50", "--set", "depth=5"}, 2, {"has no hyper-parameter 'depth'"})
HOSTILE("models list with a name", {"models", "list", "resnet50"}, 2, {"takes no model name"})
HOSTILE("models show without a name", {"models", "show"}, 2, {"expected a model name"})
HOSTILE("models without an action", {"models"}, 2, {"expected 'list' or 'show NAME'"})
HOSTILE("models --format xml", {"models", "list", "--format", "xml"}, 2,
        {"'xml' is not one of text, json"})
HOSTILE("models show at the smallest resolution",
        {"models", "show", "resnet50", "--set", "resolution=17", "--format", "json"}, 0,
        {"\"resolution\": 17"})

HOSTILE("no command", {}, 2, {})
HOSTILE("unknown command", {"simulat"}, 2, {"unknown command 'simulat'"})
HOSTILE("an argument that is not UTF-8", {"simulate", "\xc3\x28"}, 2,
        {"argument 2 is not valid UTF-8 text"})
HOSTILE("an overlong UTF-8 encoding", {"simulate", "--set", "name=\xc0\xaf"}, 2,
        {"argument 3 is not valid UTF-8 text"})
HOSTILE("valid UTF-8 names are kept",
        {"simulate", "--set", "name=r\xc3\xa9seau", "--format", "json"}, 0,
        {"\"scenario\": \"r\xc3\xa9seau\""})
HOSTILE("--version", {"--version"}, 0, {"trainsim "})
HOSTILE("--help", {"--help"}, 0, {"usage: trainsim COMMAND"})
HOSTILE("simulate --help", {"simulate", "--help"}, 0, {"--verbose"})
