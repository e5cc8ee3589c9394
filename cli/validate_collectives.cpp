#include "cli/validate_collectives.hpp"

#include <cstdio>

#include "cli/validate_tables.hpp"
#include "fit/csv_table.hpp"
#include "sim/collectives/collective.hpp"
#include "sim/core/input_error.hpp"

namespace trainsim::cli {

const std::vector<CollectiveTable>& collective_tables() {
  static const std::vector<CollectiveTable> tables{
      {"rccl_allreduce_8xMI300X", "rccl_allreduce_1node_8xMI300X_rocm_docs.csv",
       "ROCm/system-acceptance-docs docs/mi300x/performance-bench.rst (rccl-tests "
       "all_reduce_perf -b 8 -e 8G -f 2 -g 8, 1 node x 8 MI300X)",
       "mi300x-8", "allreduce"},
      {"nccl_allreduce_16xH100_2node_a3mega", "nccl_allreduce_2node_16xH100_gcp_a3mega.csv",
       "lessizzmore/create-a3mega-ztan-fork ztan-NCCL-test-result @02dd8f4 (nccl-tests "
       "all_reduce_perf -b 8 -e 8G -f 2 -g 1, 2 x Google Cloud A3 Mega, GPUDirect-TCPXO)",
       "gcp-a3-mega-x2", "allreduce"},
  };
  return tables;
}

std::vector<fit::ValidationPoint> evaluate_collective_table(const CollectiveTable& table,
                                                            std::string_view csv,
                                                            const sim::ProfileLibrary& profiles) {
  namespace coll = sim::collectives;
  const fit::CsvTable t = fit::parse_csv_table(csv, table.file);
  const std::size_t c_ranks = t.column("n_ranks", "ranks");
  const std::size_t c_size = t.column("size_B", "message size");
  const std::size_t c_time = t.column("oop_time_us", "out-of-place time");
  const std::size_t c_type = t.column("type", "data type");
  const sim::ClusterSpec cluster = profiles.cluster(table.cluster, table.name);
  std::vector<fit::ValidationPoint> points;
  for (const fit::CsvRow& row : t.rows) {
    const std::string where = table.file + ":" + std::to_string(row.line);
    const int ranks = std::stoi(row.fields[c_ranks]);
    const double bytes = std::stod(row.fields[c_size]);
    const double time_s = std::stod(row.fields[c_time]) * 1e-6;
    if (row.fields[c_type] != "float")
      throw InputError(where, "type '" + row.fields[c_type] + "': only float rows are simulated");
    if (ranks != cluster.total_accelerators()) {
      throw InputError(where, std::to_string(ranks) + " ranks, but cluster '" + table.cluster +
                                  "' has " + std::to_string(cluster.total_accelerators()));
    }
    coll::CollectiveSpec spec;
    spec.op = coll::parse_op(table.op, where);
    spec.algorithm = coll::Algorithm::automatic;
    spec.bytes = bytes;
    spec.dtype = sim::Dtype::fp32;
    const coll::CollectiveResult r = coll::run_collective(cluster, spec);
    fit::ValidationPoint p;
    char label[96];
    std::snprintf(label, sizeof label, "%s %d ranks %.0f B", table.op.c_str(), ranks, bytes);
    p.label = label;
    p.series = table.name + "/" + table.op;
    p.x = bytes;
    p.measured = bytes / time_s * coll::busbw_factor(spec.op, ranks) / 1e9;
    p.predicted = r.busbw_bytes_per_s / 1e9;
    points.push_back(std::move(p));
  }
  fit::split_halves(points);
  return points;
}

void add_collective_tables(std::vector<ReferenceTable>& tables) {
  for (const CollectiveTable& t : collective_tables()) {
    tables.push_back({t.name, t.source, "busbw GB/s", [t](const sim::ProfileLibrary& profiles) {
                        return evaluate_collective_table(t, reference_csv(t.file), profiles);
                      }});
  }
}

}  // namespace trainsim::cli
