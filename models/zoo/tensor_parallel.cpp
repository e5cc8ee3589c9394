#include "models/zoo/tensor_parallel.hpp"

#include <cmath>
#include <stdexcept>

#include "models/zoo/generators.hpp"
#include "models/zoo/imported_workload.hpp"
#include "models/zoo/net_builder.hpp"
#include "models/zoo/transformer_blocks.hpp"
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

// ---- imported workloads (models/zoo/imported_workload.hpp): split by their layers' roles ----

// Elements a GEMM view reads and writes (A m x k, B k x n, C m x n, per batch): how its bytes
// scale when one dimension is split.
double gemm_footprint(const sim::GemmShape& g) {
  return (g.m * g.k + g.k * g.n + g.m * g.n) * g.batch;
}

// Which dimension of a linear layer's GEMM views carries the split features, in order of
// preference (PyTorch's linear: forward [m tokens, n out, k in]; input gradient [m tokens, n in,
// k out]; weight gradient [m out, n in, k tokens]): a column layer splits its output features,
// a row layer its input features.
enum class Dim { m, n, k };

double& dim_of(sim::GemmShape& g, Dim d) {
  return d == Dim::m ? g.m : d == Dim::n ? g.n : g.k;
}

struct SplitKernel {
  const std::string* layer = nullptr;
  const std::string* where = nullptr;
  int tp = 1;
};

// Splits the GEMM view of `k` where a dimension equals `features`, to `rank_features`.
void split_gemm(KernelSpec& k, std::initializer_list<Dim> prefer, double features,
                double rank_features, const SplitKernel& ctx) {
  sim::GemmShape g = k.gemm;
  for (const Dim d : prefer) {
    if (dim_of(g, d) == features) {
      dim_of(g, d) = rank_features;
      k.measured_rank_gemm = g;
      k.measured_flops_share = rank_features / features;
      k.measured_bytes_share = gemm_footprint(g) / gemm_footprint(k.gemm);
      return;
    }
  }
  throw InputError(
      *ctx.where,
      "imported layer '" + *ctx.layer + "' cannot be split by tensor parallelism tp=" +
          std::to_string(ctx.tp) + ": its kernel '" + std::string(k.what).substr(0, 60) +
          "' has a GEMM view [" + std::to_string(static_cast<long long>(k.gemm.m)) + ", " +
          std::to_string(static_cast<long long>(k.gemm.n)) + ", " +
          std::to_string(static_cast<long long>(k.gemm.k)) + "] with no dimension of the layer's " +
          std::to_string(static_cast<long long>(features)) + " split features");
}

bool has_view(const KernelSpec& k) {
  return sim::is_compute_class(k.cls) && k.gemm.m > 0 && k.gemm.n > 0 && k.gemm.k > 0;
}

// Splits every batch-1 GEMM of a layer along its split features: forward kernels look for them
// in `fwd`'s order of dimensions, backward kernels in `bwd`'s.
void split_layer_gemms(Layer& l, std::initializer_list<Dim> fwd, std::initializer_list<Dim> bwd,
                       double features, double rank_features, const SplitKernel& ctx) {
  for (KernelSpec& k : l.fwd_kernels) {
    if (has_view(k) && k.gemm.batch == 1) split_gemm(k, fwd, features, rank_features, ctx);
  }
  for (KernelSpec& k : l.bwd_kernels) {
    if (has_view(k) && k.gemm.batch == 1) split_gemm(k, bwd, features, rank_features, ctx);
  }
}

// The first forward GEMM of a linear layer (batch-1 view), as imported_workload.cpp weight_gemm.
const KernelSpec* forward_gemm(const Layer& l) {
  for (const KernelSpec& k : l.fwd_kernels) {
    if (has_view(k) && k.gemm.batch == 1) return &k;
  }
  return nullptr;
}

void share_all(Layer& l, double share) {
  for (auto* pass : {&l.fwd_kernels, &l.bwd_kernels}) {
    for (KernelSpec& k : *pass) {
      k.measured_flops_share = share;
      k.measured_bytes_share = share;
    }
  }
}

std::int64_t shrink(std::int64_t n, double share) {
  return static_cast<std::int64_t>(std::llround(static_cast<double>(n) * share));
}

void add_tp(std::vector<TpCollective>& into, double elements, const char* what) {
  TpCollective c;
  c.op = TpCollectiveOp::allreduce;
  c.elements_per_sample = elements;
  c.what = what;
  into.push_back(c);
}

ZooModel shard_imported(const ZooModel& whole, int tp, bool sequence_parallel,
                        const std::string& where) {
  const MeasuredOrigin& origin = *whole.measured;
  if (sequence_parallel) {
    throw InputError(where,
                     "sequence parallelism of an imported workload is not supported (its "
                     "replicated kernels cannot be split by tokens); use tensor "
                     "parallelism without it");
  }
  const auto role = [&](std::size_t i) {
    return i < origin.tp_roles.size() ? origin.tp_roles[i] : ImportedTpRole::replicated;
  };
  bool any = false;
  for (std::size_t i = 0; i < whole.layers.size(); ++i)
    any = any || role(i) != ImportedTpRole::replicated;
  if (!any) {
    throw InputError(where, "tensor parallelism tp=" + std::to_string(tp) +
                                " of an imported workload needs its layers' tensor-parallel "
                                "roles, and no layer of it carries one (\"tp\": \"column\", "
                                "\"row\", \"vocab\" or \"split\" in the workload file: set by "
                                "'trainsim import' from a trace with module names, or by hand); "
                                "use tp=1");
  }
  const double batch = origin.batch;
  const double t = static_cast<double>(tp);
  ZooModel rank = whole;
  bool region_open = false;
  for (std::size_t i = 0; i < rank.layers.size(); ++i) {
    Layer& l = rank.layers[i];
    const SplitKernel ctx{&l.name, &where, tp};
    const KernelSpec* fg = forward_gemm(l);
    const auto refuse = [&](const std::string& what, double value) {
      throw InputError(
          where, "imported layer '" + l.name + "' (" + imported_tp_role_name(role(i)) +
                     ") cannot be split by tensor parallelism tp=" + std::to_string(tp) + ": its " +
                     what + " " + std::to_string(static_cast<long long>(value)) +
                     " is not divisible by tp=" + std::to_string(tp));
    };
    if ((role(i) == ImportedTpRole::column || role(i) == ImportedTpRole::row) && fg == nullptr) {
      throw InputError(where, "imported layer '" + l.name + "' (" + imported_tp_role_name(role(i)) +
                                  ") has no forward GEMM with a view to split");
    }
    // paper: Megatron-LM requires the attention heads and key/value groups divisible by tp
    // (NVIDIA/Megatron-LM megatron/core/transformer/attention.py, divide()).
    if (i < origin.tp_heads.size() && role(i) != ImportedTpRole::replicated) {
      if (origin.tp_heads[i][0] > 0 && origin.tp_heads[i][0] % tp != 0)
        refuse("heads", static_cast<double>(origin.tp_heads[i][0]));
      if (origin.tp_heads[i][1] > 0 && origin.tp_heads[i][1] % tp != 0)
        refuse("kv_heads", static_cast<double>(origin.tp_heads[i][1]));
    }
    double share = 1;
    switch (role(i)) {
      case ImportedTpRole::replicated:
        break;
      case ImportedTpRole::column: {
        // Output features split: every kernel of the layer works on its n / tp columns.
        const double out = fg->gemm.n;
        if (std::fmod(out, t) != 0) refuse("output features", out);
        share = 1 / t;
        share_all(l, share);
        split_layer_gemms(l, {Dim::n, Dim::k, Dim::m}, {Dim::k, Dim::m, Dim::n}, out, out / t, ctx);
        // The first column layer of a region: its input's gradient, summed over the region's
        // column layers by autograd, is all-reduced once (Megatron's f operator, backward).
        if (!region_open)
          add_tp(l.tp_bwd, fg->gemm.m * fg->gemm.k / batch, "column dgrad allreduce");
        region_open = true;
        l.params = shrink(l.params, share);
        l.output_elements *= share;
        break;
      }
      case ImportedTpRole::row: {
        // Input features split: the GEMMs on the rank's k / tp rows; the bias add and its
        // gradient stay whole (after the all-reduce, Megatron's RowParallelLinear).
        const double in = fg->gemm.k;
        if (std::fmod(in, t) != 0) refuse("input features", in);
        split_layer_gemms(l, {Dim::k, Dim::n, Dim::m}, {Dim::n, Dim::k, Dim::m}, in, in / t, ctx);
        add_tp(l.tp_fwd, fg->gemm.m * fg->gemm.n / batch, "row out allreduce");
        region_open = false;
        const double weight = fg->gemm.n * fg->gemm.k;
        const double p = static_cast<double>(l.params);
        l.params = p >= weight ? static_cast<std::int64_t>(std::llround(p - weight + weight / t))
                               : shrink(l.params, 1 / t);
        break;
      }
      case ImportedTpRole::split: {
        // Between a column and its row layer: the rank's heads or features. Batched GEMMs
        // (attention scores, heads x samples) split their batch.
        share = 1 / t;
        share_all(l, share);
        for (auto* pass : {&l.fwd_kernels, &l.bwd_kernels}) {
          for (KernelSpec& k : *pass) {
            if (!has_view(k)) continue;
            if (k.gemm.batch > 1) {
              if (std::fmod(k.gemm.batch, t) != 0) refuse("batched GEMM's batch", k.gemm.batch);
              sim::GemmShape g = k.gemm;
              g.batch /= t;
              k.measured_rank_gemm = g;
            } else {
              // A matrix product of split activations: its view's largest dimension splits.
              sim::GemmShape g = k.gemm;
              double& d = g.n >= g.m && g.n >= g.k ? g.n : g.m >= g.k ? g.m : g.k;
              if (std::fmod(d, t) != 0) refuse("GEMM dimension", d);
              d /= t;
              k.measured_rank_gemm = g;
              k.measured_bytes_share = gemm_footprint(g) / gemm_footprint(k.gemm);
            }
          }
        }
        l.params = shrink(l.params, share);
        l.output_elements *= share;
        break;
      }
      case ImportedTpRole::vocab: {
        if (fg != nullptr) {
          // The head: column-parallel over the vocabulary padded to 128 x tp (Megatron-LM's
          // --make-vocab-size-divisible-by, as the zoo's heads), its input gradient all-reduced,
          // and the vocabulary-parallel cross entropy's three statistics per token.
          const double vocab = fg->gemm.n;
          const double rank_vocab =
              static_cast<double>(tp_padded_vocab(static_cast<std::int64_t>(vocab), tp) / tp);
          share = rank_vocab / vocab;
          share_all(l, share);
          split_layer_gemms(l, {Dim::n, Dim::k, Dim::m}, {Dim::k, Dim::m, Dim::n}, vocab,
                            rank_vocab, ctx);
          const double tokens = fg->gemm.m / batch;
          add_tp(l.tp_bwd, tokens * fg->gemm.k, "lm head dgrad allreduce");
          add_tp(l.tp_fwd, tokens, "cross entropy max allreduce");
          add_tp(l.tp_fwd, tokens, "cross entropy target allreduce");
          add_tp(l.tp_fwd, tokens, "cross entropy sum allreduce");
          l.output_elements *= share;
        } else {
          // The embedding: each rank looks up every token in its rows of the table (zeros for
          // the others; its kernels as measured: estimate) and the partial outputs are
          // all-reduced (Megatron-LM's VocabParallelEmbedding).
          if (l.output_elements <= 0) {
            throw InputError(where, "imported layer '" + l.name +
                                        "' (vocab, no GEMM: an embedding) has no output_elements, "
                                        "the size of its output all-reduce");
          }
          share = 1 / t;
          add_tp(l.tp_fwd, l.output_elements, "embedding allreduce");
        }
        l.params = shrink(l.params, share);
        break;
      }
    }
    // Per-sample work of the rank (reports), from the kernels' shares.
    l.fwd_flops = 0;
    l.fwd_macs = 0;
    l.bwd_input_flops = 0;
    for (const KernelSpec& k : l.fwd_kernels) {
      l.fwd_flops += k.flops * k.measured_flops_share;
      if (sim::is_compute_class(k.cls)) l.fwd_macs += k.flops * k.measured_flops_share / 2;
    }
    for (const KernelSpec& k : l.bwd_kernels)
      l.bwd_input_flops += k.flops * k.measured_flops_share;
  }
  rank.description =
      whole.description + ", one of " + std::to_string(tp) + " tensor-parallel ranks";
  return rank;
}

}  // namespace

ZooModel shard_tensor_parallel(const ZooModel& whole, int tp, bool sequence_parallel,
                               const std::string& where) {
  if (tp < 1) {
    throw InputError(where, "tensor parallelism tp=" + std::to_string(tp) + " must be at least 1");
  }
  if (tp == 1) return whole;
  if (whole.measured) return shard_imported(whole, tp, sequence_parallel, where);
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
