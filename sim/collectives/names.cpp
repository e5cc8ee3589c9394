// The names of the collective operations and algorithms and their parsers, apart from the
// collective runner, so the scenario loader (and its fuzz harness) parses a name without linking
// the network model.

#include "sim/collectives/collective.hpp"

#include <cstddef>
#include <string>

#include "sim/core/input_error.hpp"

namespace trainsim::sim::collectives {

namespace {

constexpr Op kOps[] = {Op::allreduce, Op::allgather, Op::reduce_scatter, Op::broadcast,
                       Op::alltoall};
constexpr Algorithm kAlgorithms[] = {Algorithm::automatic,
                                     Algorithm::ring,
                                     Algorithm::tree,
                                     Algorithm::double_binary_tree,
                                     Algorithm::halving_doubling,
                                     Algorithm::hierarchical,
                                     Algorithm::nvls,
                                     Algorithm::collnet,
                                     Algorithm::parameter_server,
                                     Algorithm::topk,
                                     Algorithm::gtopk};

template <typename T, std::size_t N, typename NameOf>
T parse_named(std::string_view name, std::string_view where, const T (&all)[N], NameOf name_of,
              const char* what) {
  std::string valid;
  for (T v : all) {
    if (name == name_of(v)) return v;
    valid += valid.empty() ? "" : ", ";
    valid += name_of(v);
  }
  throw InputError(std::string(where), "unknown " + std::string(what) + " '" + std::string(name) +
                                           "' (valid: " + valid + ")");
}

}  // namespace

const char* op_name(Op op) {
  switch (op) {
    case Op::allreduce:
      return "allreduce";
    case Op::allgather:
      return "allgather";
    case Op::reduce_scatter:
      return "reduce_scatter";
    case Op::broadcast:
      return "broadcast";
    case Op::alltoall:
      return "alltoall";
  }
  return "?";
}

const char* algorithm_name(Algorithm a) {
  switch (a) {
    case Algorithm::automatic:
      return "auto";
    case Algorithm::ring:
      return "ring";
    case Algorithm::tree:
      return "tree";
    case Algorithm::double_binary_tree:
      return "double_binary_tree";
    case Algorithm::halving_doubling:
      return "halving_doubling";
    case Algorithm::hierarchical:
      return "hierarchical";
    case Algorithm::nvls:
      return "nvls";
    case Algorithm::collnet:
      return "collnet";
    case Algorithm::parameter_server:
      return "parameter_server";
    case Algorithm::topk:
      return "topk";
    case Algorithm::gtopk:
      return "gtopk";
  }
  return "?";
}

Algorithm parse_algorithm(std::string_view name, std::string_view where) {
  return parse_named(name, where, kAlgorithms, algorithm_name, "algorithm");
}

Op parse_op(std::string_view name, std::string_view where) {
  return parse_named(name, where, kOps, op_name, "op");
}

Protocol parse_protocol(std::string_view name, std::string_view where) {
  constexpr Protocol kProtocols[] = {Protocol::ll, Protocol::ll128, Protocol::simple};
  return parse_named(name, where, kProtocols, protocol_name, "protocol");
}

}  // namespace trainsim::sim::collectives
