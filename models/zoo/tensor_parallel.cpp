#include "models/zoo/tensor_parallel.hpp"

#include <stdexcept>

#include "models/zoo/generators.hpp"
#include "models/zoo/net_builder.hpp"
#include "sim/core/input_error.hpp"

namespace trainsim::models {

namespace {

std::string split_text(int tp, bool sequence_parallel) {
  return "tensor parallelism tp=" + std::to_string(tp) +
         (sequence_parallel ? " with sequence parallelism" : "");
}

// Refuses a split Megatron-LM refuses, naming the entry and the value, before anything is built.
void check_splittable(const ZooModel& whole, int tp, bool sequence_parallel,
                      const std::string& where) {
  const std::string how = split_text(tp, sequence_parallel);
  const auto refuse = [&](const Layer& l, const std::string& what) {
    throw InputError(where, "model '" + whole.name + "' cannot be split by " + how + ": entry '" +
                                l.name + "' " + what +
                                " is not divisible by tp=" + std::to_string(tp));
  };
  bool any = false;
  for (const auto& l : whole.layers) {
    if (!l.transformer) continue;
    const TransformerEntryInfo& info = *l.transformer;
    if (info.parallel.tp != 1 || !l.tp_fwd.empty() || !l.tp_bwd.empty()) {
      throw InputError(where, "model '" + whole.name +
                                  "' is already split by tensor parallelism (" +
                                  std::to_string(info.parallel.tp) + " ranks)");
    }
    any = true;
    if (info.part == TransformerPart::attention) {
      // paper: Megatron-LM requires num_attention_heads and num_query_groups divisible by the
      // tensor-parallel size (NVIDIA/Megatron-LM megatron/core/transformer/attention.py, divide()).
      if (info.heads % tp != 0) refuse(l, "heads=" + std::to_string(info.heads));
      if (info.kv_heads % tp != 0) refuse(l, "kv_heads=" + std::to_string(info.kv_heads));
    }
    if (info.part == TransformerPart::mlp && info.d_ff % tp != 0)
      refuse(l, "d_ff=" + std::to_string(info.d_ff));
    if (sequence_parallel) {
      if (info.seq % tp != 0) refuse(l, "sequence of " + std::to_string(info.seq) + " tokens");
      if (info.cross && info.kv_seq % tp != 0)
        refuse(l, "memory of " + std::to_string(info.kv_seq) + " tokens");
    }
  }
  if (!any) {
    throw InputError(where, "model '" + whole.name + "' cannot be split by " + how +
                                ": it has no transformer entries (attention, MLP, vocabulary) to "
                                "split; use tp=1");
  }
}

}  // namespace

ZooModel shard_tensor_parallel(const ZooModel& whole, int tp, bool sequence_parallel,
                               const std::string& where) {
  if (tp < 1) {
    throw InputError(where, "tensor parallelism tp=" + std::to_string(tp) + " must be at least 1");
  }
  if (tp == 1) return whole;
  check_splittable(whole, tp, sequence_parallel, where);
  ZooModel rank;
  try {
    rank = generate_catalog_model(whole.name, whole.hyperparameters,
                                  TensorParallelism{tp, sequence_parallel});
  } catch (const ShapeError& e) {
    throw InputError(where, "model '" + whole.name + "' cannot be split by " +
                                split_text(tp, sequence_parallel) + ": " + e.what());
  }
  // The same entries in the same order: pipeline stage boundaries carry over.
  if (rank.layers.size() != whole.layers.size()) {
    throw std::logic_error("shard_tensor_parallel: " + whole.name + " changed its entry count");
  }
  for (std::size_t i = 0; i < rank.layers.size(); ++i) {
    if (rank.layers[i].name != whole.layers[i].name)
      throw std::logic_error("shard_tensor_parallel: " + whole.name + " renamed an entry");
  }
  rank.description = whole.description + ", one of " + std::to_string(tp) +
                     " tensor-parallel ranks" +
                     (sequence_parallel ? " (sequence parallel)" : std::string());
  return rank;
}

}  // namespace trainsim::models
