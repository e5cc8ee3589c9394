// Transformer-XL (Dai et al. 2019) as NVIDIA DeepLearningExamples trains it on WikiText-103
// (NVIDIA/DeepLearningExamples@729963dd, PyTorch/LanguageModeling/Transformer-XL/pytorch/
// mem_transformer.py and utils/proj_adaptive_softmax.py): an adaptive input embedding, post-LN
// layers whose self-attention also covers `mem_len` cached states of the previous segment and adds
// the relative position terms, and a projected adaptive softmax tied to the embedding. One entry
// for the embedding, two per layer (attention, MLP), one for the softmax and loss.
#include <cmath>
#include <iterator>
#include <string>
#include <vector>

#include "models/zoo/generators.hpp"
#include "models/zoo/transformer_blocks.hpp"

namespace trainsim::models {

namespace {

// paper: Baevski & Auli 2019 (adaptive input representations), Sec. 4: WikiText-103's vocabulary
// in bands of 20K, 40K and 200K words, coded in DeepLearningExamples' pytorch/train.py ("wt103")
// as cutoffs 19997, 39997, 199997: a head of the most frequent words and three tail clusters.
constexpr std::int64_t kCutoffs[] = {19997, 39997, 199997};

// estimate: the tokens whose rank lies in (a, b] of a vocabulary of V words, under Zipf's law with
// exponent 1 (Zipf 1949, "Human Behavior and the Principle of Least Effort"): (H_b - H_a) / H_V,
// with the harmonic number H_n ~ ln n + 0.5772 (Euler-Mascheroni). The tail clusters of the
// adaptive embedding and softmax only work on the tokens that fall in them; for WikiText-103 this
// gives 80% of tokens in the head, and 5%, 12% and 2% in the tails.
double zipf_share(std::int64_t a, std::int64_t b, std::int64_t vocab) {
  auto harmonic = [](std::int64_t n) {
    return n == 0 ? 0.0 : std::log(static_cast<double>(n)) + 0.5772156649;
  };
  return (harmonic(b) - harmonic(a)) / harmonic(vocab);
}

// Tokens of a `seq`-token segment that fall in the cluster (a, b]: at least one, so that every
// cluster's work and memory appear.
std::int64_t cluster_rows(std::int64_t seq, std::int64_t a, std::int64_t b, std::int64_t vocab) {
  const auto rows =
      static_cast<std::int64_t>(std::llround(static_cast<double>(seq) * zipf_share(a, b, vocab)));
  return std::max<std::int64_t>(1, rows);
}

}  // namespace

ZooModel make_transformer_xl(const Hyperparameters& hp, bool attention_dropout, bool tf1_graph) {
  TransformerDims dims;
  dims.d_model = hp.get("d_model");
  dims.d_ff = hp.get("d_inner");
  dims.heads = hp.get("n_head");
  dims.head_dim = hp.get("d_head");
  dims.attention_bias = false;  // qkv_net, o_net and r_net have no bias; the MLP has
  dims.attention_dropout = attention_dropout;
  dims.memory_len = hp.get("mem_len");
  // Tensor parallelism splits the layers' attention and MLP; the adaptive embedding and softmax
  // have no Megatron-LM split and stay replicated on every rank. Self-attention's keys cover the
  // cached memory and the whole segment, so the segment cannot be split by sequence.
  dims.parallel = hp.parallel();
  if (dims.parallel.sequence_parallel && dims.parallel.tp > 1) {
    throw ShapeError(
        "sequence parallelism is not available for Transformer-XL (its attention "
        "covers the cached memory and the whole segment)");
  }
  check_transformer_dims(dims);
  const std::int64_t seq = hp.get("tgt_len");
  const std::int64_t vocab = hp.get("vocab");
  const std::int64_t div_val = hp.get("div_val");
  const std::int64_t d = dims.d_model;
  // train.py: with --adaptive the WikiText-103 cutoffs split the vocabulary into a head and three
  // tail clusters; without it `cutoffs = []`, so the embedding is one table and the softmax one
  // full-vocabulary projection (a single cluster).
  const std::int64_t clusters = hp.get("adaptive_clusters");
  constexpr auto kMaxClusters = static_cast<std::int64_t>(std::size(kCutoffs)) + 1;
  if (clusters > kMaxClusters) {
    throw ShapeError("adaptive_clusters=" + std::to_string(clusters) + " exceeds " +
                     std::to_string(kMaxClusters) +
                     " (the head and WikiText-103's three tail clusters)");
  }
  std::vector<std::int64_t> ends = {0};
  for (std::int64_t i = 0; i + 1 < clusters; ++i)
    ends.push_back(kCutoffs[i]);
  if (vocab <= ends.back()) {
    throw ShapeError("vocab=" + std::to_string(vocab) + " must exceed the last adaptive-softmax " +
                     "cutoff (" + std::to_string(ends.back()) + ")");
  }
  ends.push_back(vocab);
  auto cluster_dim = [&](std::size_t i) {
    std::int64_t dim = d;  // d_embed = d_model (train.py: d_embed defaults to d_model)
    for (std::size_t k = 0; k < i; ++k)
      dim /= div_val;
    if (dim <= 0) {
      throw ShapeError("div_val=" + std::to_string(div_val) + " leaves cluster " +
                       std::to_string(i) + " without embedding width");
    }
    return dim;
  };

  ZooModel m;
  m.input_shape = {seq};
  m.input_dtype = InputDtype::int32;
  NetBuilder nb;
  nb.set_tf1_graph(tf1_graph);
  const Tensor ids = nb.input({seq});

  // Adaptive input (Baevski & Auli 2019): one table when div_val = 1, else a table of width
  // d / div_val^i per cluster, each projected to d_model.
  nb.begin("word_emb", OpClass::embedding, ids.elements());
  Tensor x;
  if (div_val == 1) {
    x = nb.embedding(ids, vocab, d);
  } else {
    for (std::size_t i = 0; i + 1 < ends.size(); ++i) {
      const Tensor rows = nb.input({cluster_rows(seq, ends[i], ends[i + 1], vocab)});
      const Tensor emb = nb.embedding(rows, ends[i + 1] - ends[i], cluster_dim(i));
      const Tensor proj = nb.linear(emb, d, false);  // emb_projs[i]
      if (i == 0) x = nb.copy_as(proj, {seq, d});    // index_copy_ into the {seq, d} output
    }
  }
  // The scale by sqrt(d_model) is in place; the dropout is not. The sinusoid embedding of the
  // memory + segment relative positions is computed (and dropped out) once here and projected by
  // every layer's r_net.
  x = nb.dropout(x);
  const Tensor positions = nb.dropout(nb.input({dims.memory_len + seq, d}));
  mark_vocab_entry(nb, TransformerPart::embedding, d, seq, vocab);
  nb.end(x);
  for (std::int64_t i = 0; i < hp.get("n_layer"); ++i) {
    const std::string p = "layers." + std::to_string(i) + ".";
    AttentionExtras extras;
    extras.xl_positions = &positions;
    extras.xl_owns_biases = i == 0;  // r_w_bias and r_r_bias are shared by all layers
    x = attention_entry(nb, p + "attn", x, dims, NormPlacement::post, nullptr, 0, extras);
    x = mlp_entry(nb, p + "ff", x, dims, NormPlacement::post, Activation::relu, 0);
  }

  // Projected adaptive softmax (Grave et al. 2017) over the output dropout: the head scores the
  // shortlist (weights tied to the embedding, biases its own) and one logit per tail cluster
  // (weights and biases its own); each tail scores only the tokens whose target lies in it. With
  // div_val > 1 the head goes through an untied projection, the tails through the embedding's.
  // With one cluster (adaptive off) the head is the whole vocabulary and there are no tail logits.
  nb.begin("crit", OpClass::matmul, x.elements());
  const Tensor h = nb.dropout(x);
  const Tensor head_in = div_val == 1 ? h : nb.linear(h, cluster_dim(0), false);
  nb.loss(nb.linear(head_in, ends[1], true, true));
  const auto tails = static_cast<std::int64_t>(ends.size()) - 2;
  if (tails > 0) nb.loss(nb.linear(head_in, tails, true));
  for (std::size_t i = 1; i + 1 < ends.size(); ++i) {
    Tensor tail = nb.take_rows(h, cluster_rows(seq, ends[i], ends[i + 1], vocab));
    if (div_val > 1) tail = nb.linear(tail, cluster_dim(i), false, true);
    nb.loss(nb.linear(tail, ends[i + 1] - ends[i], true, true));
  }
  mark_vocab_entry(nb, TransformerPart::head, d, seq, vocab);
  nb.end(h);
  m.layers = nb.take_layers();
  return m;
}

}  // namespace trainsim::models
