// Hostile scenario files: structure, nesting, duplicate keys, numbers, encodings, paths.
#include "hostile/hostile_support.hpp"

using trainsim::test::deep_array;
using trainsim::test::deep_object;

namespace {

// A valid scenario that runs in milliseconds, with `extra` spliced in as more top-level keys.
std::string scenario(const std::string& extra = "") {
  return R"({"name": "tiny", "cluster": "dgx-a100", "model": "resnet20", "batch_per_replica": 32,
  "precision": "fp16", "parallelism": {"data": 8}, "steps": 3, "warmup_steps": 1)" +
         (extra.empty() ? std::string() : ",\n" + extra) + "}";
}

}  // namespace

HOSTILE("scenario nested 100,000 objects deep", {"simulate", "@/s.json"}, 2,
        {"@/s.json:1:385", "nested deeper than the limit of 64 levels", "a.a.a"},
        {{"s.json", deep_object(100000)}})
HOSTILE("scenario nested 100,000 arrays deep", {"simulate", "@/s.json"}, 2,
        {"@/s.json:1:65", "nested deeper than the limit of 64 levels", "[0][0]"},
        {{"s.json", deep_array(100000)}})
HOSTILE("scenario with a cluster nested 100,000 deep", {"simulate", "@/s.json"}, 2,
        {"@/s.json:1:", "nested deeper", "(at cluster.a.a"},
        {{"s.json", "{\"name\": \"x\", \"cluster\": " + deep_object(100000) + "}"}})
HOSTILE("scenario nested 65 levels is refused", {"simulate", "@/s.json"}, 2,
        {"nested deeper than the limit of 64"}, {{"s.json", deep_object(65)}})
HOSTILE("scenario nested 64 levels parses (then fails on its keys)", {"simulate", "@/s.json"}, 2,
        {"@/s.json: cluster: missing required key 'cluster'"}, {{"s.json", deep_object(64)}})
HOSTILE("duplicate top-level key", {"simulate", "@/s.json"}, 2,
        {"@/s.json:3:", "key 'steps' appears twice in the top-level object", "first at line 2"},
        {{"s.json", scenario("\"steps\": 4")}})
HOSTILE("duplicate key inside an object", {"simulate", "@/s.json"}, 2,
        {"@/s.json:3:", "key 'data' appears twice in object parallelism"},
        {{"s.json", R"({"name": "x",
 "parallelism": {"data": 8,
   "data": 4}})"}})
HOSTILE("duplicate key spelled with an escape", {"simulate", "@/s.json"}, 2,
        {"key 'name' appears twice"}, {{"s.json", R"({"name": "a", "n\u0061me": "b"})"}})
HOSTILE("duplicate key in an array of objects", {"plan", "--catalog", "@/c.json", "--target", "1"},
        2, {"@/c.json:1:", "key 'name' appears twice in object options[0]"},
        {{"c.json", R"({"kind": "plan_catalog", "options": [{"name": "a", "name": "b"}]})"}})
HOSTILE("number overflow 1e999 names file, key and value", {"simulate", "@/s.json"}, 2,
        {"@/s.json:3:", "steps: number 1e999 is out of range"},
        {{"s.json", "{\"name\": \"x\",\n\"cluster\": \"dgx-a100\",\n\"steps\": 1e999}"}})
HOSTILE("number overflow inside an array", {"simulate", "@/s.json"}, 2,
        {"balance[2]: number -1e999 is out of range"},
        {{"s.json", R"({"parallelism": {"balance": [1, 2, -1e999]}})"}})
HOSTILE("number overflow in a nested object", {"simulate", "@/s.json"}, 2,
        {"input.workers: number 2e400 is out of range"},
        {{"s.json", R"({"input": {"workers": 2e400}})"}})
HOSTILE("integer beyond int64", {"simulate", "@/s.json"}, 2, {"steps: value 1e+20 is out of range"},
        {{"s.json", R"({"name": "x", "cluster": "dgx-a100", "model": "resnet20",
  "batch_per_replica": 32, "steps": 99999999999999999999})"}})
HOSTILE("integer 2^64-1 is not read as -1", {"simulate", "@/s.json"}, 2,
        {"steps: value 18446744073709551615 is out of range"},
        {{"s.json", R"({"name": "x", "cluster": "dgx-a100", "model": "resnet20",
  "batch_per_replica": 32, "steps": 18446744073709551615})"}})
HOSTILE("steps written 1e1 is an integer", {"simulate", "@/s.json", "--format", "json"}, 0,
        {"\"step_time_s\""},
        {{"s.json", scenario().replace(scenario().find("\"steps\": 3"), 10, "\"steps\": 1e1")}})
HOSTILE("batch written 32.0 is an integer", {"simulate", "@/s.json", "--format", "json"}, 0,
        {"\"global_batch\": 256"},
        {{"s.json", scenario().replace(scenario().find("32"), 2, "32.0")}})
HOSTILE("batch 32.5 is not an integer", {"simulate", "@/s.json"}, 2,
        {"batch_per_replica: expected an integer, got 32.5"},
        {{"s.json", scenario().replace(scenario().find("32"), 2, "32.5")}})
HOSTILE("steps -0", {"simulate", "@/s.json"}, 2, {"steps: value 0 must be at least 1"},
        {{"s.json", scenario().replace(scenario().find("\"steps\": 3"), 10, "\"steps\": -0")}})
HOSTILE("empty scenario file", {"simulate", "@/s.json"}, 2,
        {"@/s.json:1:1: malformed JSON", "unexpected end of input"}, {{"s.json", ""}})
HOSTILE("whitespace-only scenario file", {"simulate", "@/s.json"}, 2,
        {"@/s.json:3:", "malformed JSON"}, {{"s.json", "  \n\n  "}})
HOSTILE("scenario is a JSON array", {"simulate", "@/s.json"}, 2,
        {"@/s.json: (top level): expected an object, got [1,2]"}, {{"s.json", "[1, 2]"}})
HOSTILE("scenario is a JSON string", {"simulate", "@/s.json"}, 2,
        {"(top level): expected an object"}, {{"s.json", "\"resnet50\""}})
HOSTILE("truncated scenario", {"simulate", "@/s.json"}, 2,
        {"@/s.json:2:", "malformed JSON: syntax error"},
        {{"s.json", "{\"name\": \"x\",\n\"steps\": "}})
HOSTILE("trailing garbage after the object", {"simulate", "@/s.json"}, 2,
        {"@/s.json:1:", "malformed JSON", "expected end of input"},
        {{"s.json", "{\"name\": \"x\"} {}"}})
HOSTILE("invalid UTF-8 in a string", {"simulate", "@/s.json"}, 2, {"@/s.json:1:", "malformed JSON"},
        {{"s.json", "{\"name\": \"\xff\xfe\"}"}})
HOSTILE("NUL byte in the file", {"simulate", "@/s.json"}, 2, {"@/s.json:1:", "malformed JSON"},
        {{"s.json", std::string("{\"name\": \"a\0b\"}", 15)}})
HOSTILE("unterminated block comment", {"simulate", "@/s.json"}, 2, {"malformed JSON"},
        {{"s.json", "{\"name\": \"x\" /* never closed"}})
HOSTILE("UTF-8 byte-order mark is accepted", {"simulate", "@/s.json", "--format", "csv"}, 0,
        {"step_time_s"}, {{"s.json", "\xEF\xBB\xBF" + scenario()}})
HOSTILE("description that is a number", {"simulate", "@/s.json"}, 2,
        {"@/s.json: description: expected a string, got 5"},
        {{"s.json", scenario("\"description\": 5")}})
HOSTILE("description that is an array", {"simulate", "@/s.json"}, 2,
        {"description: expected a string, got [\"a\"]"},
        {{"s.json", scenario("\"description\": [\"a\"]")}})
HOSTILE("name that is a number", {"simulate", "@/s.json"}, 2, {"name: expected a string, got 7"},
        {{"s.json", R"({"name": 7})"}})
HOSTILE("unknown key with a suggestion", {"simulate", "@/s.json"}, 2,
        {"stesp: unknown key 'stesp' (did you mean 'steps'?)"},
        {{"s.json", scenario("\"stesp\": 3")}})
HOSTILE("a folder given as the scenario", {"simulate", "@src/examples"}, 2,
        {"examples: is a folder, not a scenario file"})
HOSTILE("a missing scenario file", {"simulate", "@/nope.json"}, 2,
        {"@/nope.json: cannot open scenario file: it does not exist"})
HOSTILE("/dev/null as the scenario", {"simulate", "/dev/null"}, 2,
        {"/dev/null:1:1: malformed JSON"})
HOSTILE("/dev/zero as the scenario is bounded", {"simulate", "/dev/zero"}, 2,
        {"/dev/zero: scenario file is larger than the limit of 16 MiB"})
HOSTILE("a scenario file over 16 MiB", {"simulate", "@/s.json"}, 2,
        {"@/s.json: scenario file is larger than the limit of 16 MiB"},
        {{"s.json", "{\"description\": \"" + std::string(17 << 20, 'x') + "\"}"}})
HOSTILE("a key holding a newline stays on one line", {"simulate", "@/s.json"}, 2,
        {"unknown key 'a\\nb'"}, {{"s.json", scenario("\"a\\nb\": 1")}})
HOSTILE("an inline cluster with zero nodes", {"simulate", "@/s.json"}, 2,
        {"cluster.nodes: value 0 must be at least 1"}, {{"s.json", R"({"cluster": {"nodes": 0}})"}})
HOSTILE("model hyper-parameters of the wrong type", {"simulate", "@/s.json"}, 2,
        {"model.resolution: expected a number, got \"big\""},
        {{"s.json", R"({"name": "x", "cluster": "dgx-a100",
  "model": {"name": "resnet50", "resolution": "big"}})"}})
HOSTILE("echo object of the wrong type", {"simulate", "@/s.json"}, 2,
        {"input.echo: expected an object, got 2"},
        {{"s.json", scenario("\"input\": {\"echo\": 2}")}})
