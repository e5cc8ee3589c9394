#pragma once
// The resource limits every input path is checked against, in one place (README "Limits").
// Each is far above what a sensible input needs, and low enough that a run or a parse within
// them finishes in seconds on a laptop and never exhausts the stack or the event engine. Inputs
// beyond a limit exit 2 with a message naming the key, the value and the limit.

#include <cstdint>

namespace trainsim::sim::limits {

// JSON documents (scenarios, profiles, catalogs, --set values). The deepest built-in document
// nests 4 levels (a cluster's node.intra.link); 64 leaves room for inline profiles while
// keeping the recursive copy/dump of nlohmann::json far from the stack limit.
inline constexpr int kMaxJsonDepth = 64;
// The largest built-in JSON file is under 4 KiB.
inline constexpr std::int64_t kMaxJsonFileBytes = std::int64_t{16} << 20;  // 16 MiB
// CSV tables of measured points (fit, calibrate).
inline constexpr std::int64_t kMaxCsvFileBytes = std::int64_t{64} << 20;  // 64 MiB
inline constexpr std::int64_t kMaxCsvRows = 100'000;

// Clusters. The largest training clusters built so far hold on the order of 10^5 accelerators;
// 2^18 = 262,144 keeps a whole-cluster collective within about 10 s (measured: a ring over
// 2^18 ranks on star-1gbe simulates in 9 s, 2^20 in 33 s with 1.3 GB of memory).
inline constexpr std::int64_t kMaxAccelerators = std::int64_t{1} << 18;
inline constexpr std::int64_t kMaxAcceleratorsPerNode = 1024;
inline constexpr std::int64_t kMaxCpuCores = 65536;
inline constexpr std::int64_t kMaxNicsPerNode = 1024;
inline constexpr std::int64_t kMaxSwitchPorts = 65536;

// Scenarios.
inline constexpr std::int64_t kMaxSteps = 10'000;             // default 6
inline constexpr std::int64_t kMaxBatchPerReplica = 1 << 24;  // samples per micro-step
inline constexpr std::int64_t kMaxGlobalBatch = std::int64_t{1} << 40;
inline constexpr std::int64_t kMaxGradAccum = 1 << 20;
inline constexpr std::int64_t kMaxMicrobatches = 1 << 20;
inline constexpr std::int64_t kMaxEchoFactor = 1024;  // the data-echoing paper uses e <= 8
inline constexpr std::int64_t kMaxPrefetchBatches = 1024;
// Zoo hyper-parameters (resolution, seq_len, d_model, layers, vocab, ...): 2^17 = 131,072
// covers 128k-token contexts and 128k-entry vocabularies, and keeps products such as
// layers x 12 x d_model^2 (parameters) far inside int64.
inline constexpr double kMaxHyperparameter = 131072;
// Events one simulation may execute (estimated before it starts): the engine runs about 5
// million events per second on the development machine, so this is 20-30 s.
inline constexpr double kMaxRunEvents = 1e8;
// With --trace every event becomes a span in memory and in the file (about 100 bytes each).
inline constexpr double kMaxTraceEvents = 2e6;
// Runs estimated above this many events (or with more accelerators than kLongRunAccelerators)
// print a progress line on stderr when stderr is a terminal.
inline constexpr double kLongRunEvents = 1e7;
inline constexpr std::int64_t kLongRunAccelerators = 65536;

// Collectives (`trainsim collective --chunks`; the automatic choice is at most 64). Measured on
// the development machine: a 1 GiB ring over 8 ranks in 4096 chunks simulates in 1 s, over 256
// ranks in 256 chunks in 5.5 s; time grows faster than chunks x ranks, so both are bounded.
inline constexpr std::int64_t kMaxChunks = 4096;
inline constexpr std::int64_t kMaxChunksTimesRanks = 65536;
// Ranks of a message-level collective (--exact, or a fabric without the phase-aggregated
// model): its cost grows as ranks^2; 1024 ranks on a fat tree take about 10 s (measured, 64 MiB
// ring allreduce on dgx-h100-x4 with 128 nodes).
inline constexpr std::int64_t kMaxMessageLevelRanks = 1024;
// Bytes per rank of one collective: 1 TiB, more than any accelerator's memory.
inline constexpr double kMaxCollectiveBytes = 1099511627776.0;

// Sweeps and plans: rows simulated by one command.
inline constexpr std::int64_t kMaxSweepRows = 100'000;

}  // namespace trainsim::sim::limits
