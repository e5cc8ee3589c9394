// Speech synthesis as NVIDIA DeepLearningExamples trains it on LJSpeech
// (NVIDIA/DeepLearningExamples@729963dd, PyTorch/SpeechSynthesis/Tacotron2): Tacotron 2
// (tacotron2/model.py, arg_parser.py defaults) and WaveGlow (waveglow/model.py, arg_parser.py
// defaults). 1-D convolutions are 2-D ones over {C, 1, L} with a 1 x k kernel; a dilated
// convolution padded to keep its length costs what an undilated one does.
#include <string>

#include "models/zoo/generators.hpp"
#include "models/zoo/net_builder.hpp"

namespace trainsim::models {

namespace {

// A 1-D convolution of `kernel` taps padded to keep the length.
Conv2d conv1d_spec(std::int64_t out_channels, std::int64_t kernel, bool bias) {
  return Conv2d{out_channels, 1, kernel, 1, 1, 0, (kernel - 1) / 2, 1, bias};
}

// {seq, features} <-> {features, 1, seq}: a transpose, which PyTorch does as a view.
Tensor to_channels(NetBuilder& nb, const Tensor& x) {
  return nb.reshape(x, {x.features(), 1, x.shape.at(0)});
}
Tensor to_sequence(NetBuilder& nb, const Tensor& x) {
  return nb.reshape(x, {x.width(), x.channels()});
}

}  // namespace

ZooModel make_tacotron2(const Hyperparameters& hp) {
  // paper: Shen et al. 2018 (Tacotron 2), Sec. 2.2-2.3, as DeepLearningExamples'
  // tacotron2/arg_parser.py defaults code it: 512-wide symbol embedding and encoder (3 convs of 5
  // taps), 1024-wide attention and decoder LSTM cells, a 256-256 prenet, 128-wide location-
  // sensitive attention with 32 filters of 31 taps, a postnet of 5 convs of 5 taps and 512
  // channels.
  constexpr std::int64_t kEmbed = 512;
  constexpr std::int64_t kEncoderKernel = 5;
  constexpr std::int64_t kRnn = 1024;
  constexpr std::int64_t kPrenet = 256;
  constexpr std::int64_t kAttention = 128;
  constexpr std::int64_t kLocationFilters = 32;
  constexpr std::int64_t kLocationKernel = 31;
  constexpr std::int64_t kPostnet = 512;
  constexpr std::int64_t kPostnetKernel = 5;
  const std::int64_t text = hp.get("text_len");
  const std::int64_t frames = hp.get("mel_frames");
  const std::int64_t mels = hp.get("n_mel_channels");
  ZooModel m;
  // Characters and the target mel frames (teacher forcing); 4 bytes each.
  m.input_shape = {text + mels * frames};
  m.input_dtype = InputDtype::fp32;
  NetBuilder nb;
  Tensor x = nb.input({text});
  x = single_entry(nb, "embedding", OpClass::embedding, x, [&](const Tensor& t) {
    return to_channels(nb, nb.embedding(t, hp.get("n_symbols"), kEmbed));
  });
  for (int i = 0; i < 3; ++i) {
    x = single_entry(
        nb, "encoder.convolutions." + std::to_string(i), OpClass::conv, x, [&](const Tensor& t) {
          return nb.dropout(conv_bn_relu(nb, t, conv1d_spec(kEmbed, kEncoderKernel, true)));
        });
  }
  nb.begin("encoder.lstm", OpClass::recurrent, x.elements());
  const Tensor seq_in = to_sequence(nb, x);
  const Tensor memory =
      nb.concat_features({nb.lstm(seq_in, kEmbed / 2), nb.lstm(seq_in, kEmbed / 2)});
  nb.end(memory);

  // The prenet runs on all (teacher-forced) frames at once; its dropout stays on in training and
  // inference alike (model.py: training=True).
  const Tensor frames_in = nb.input({frames, mels});
  nb.begin("decoder.prenet", OpClass::matmul, frames_in.elements() + memory.elements());
  Tensor p = frames_in;
  for (int i = 0; i < 2; ++i)
    p = nb.dropout(nb.activation(nb.linear(p, kPrenet, false), Activation::relu));
  nb.end(p, memory.elements());

  // The decoder loop, one step per frame (model.py Decoder.forward runs decode() once per frame):
  // it is sequential, so it stays one entry. The memory projection runs once; every step runs the
  // attention LSTM cell, location-sensitive attention, the decoder LSTM cell and the two output
  // projections on one frame, so each of those kernels is launched `frames` times.
  nb.begin("decoder", OpClass::recurrent, p.elements() + memory.elements());
  const Tensor processed_memory = nb.linear(memory, kAttention, false);  // memory_layer
  nb.begin_repeat(frames);
  const Tensor p_step = nb.loop_slice(p, {1, kPrenet});  // decoder_inputs[i], this frame's prenet
  const Tensor previous_context = nb.input({1, kEmbed}, true);
  const Tensor attention_hidden =
      nb.dropout(nb.lstm(nb.concat_features({p_step, previous_context}), kRnn));
  const Tensor query = nb.linear(attention_hidden, kAttention, false);  // query_layer
  // Location features: the previous and cumulative attention weights {2, 1, text} through a
  // 31-tap convolution and a dense layer.
  const Tensor weights = nb.input({2, 1, text}, true);
  const Tensor location_conv = nb.conv2d(weights, Conv2d{kLocationFilters, 1, kLocationKernel, 1, 1,
                                                         0, (kLocationKernel - 1) / 2, 1, false});
  const Tensor location =
      nb.linear(nb.reshape(location_conv, {text, kLocationFilters}), kAttention, false);
  const Tensor context =
      nb.additive_attention(query, processed_memory, memory, &location, kAttention);
  const Tensor decoder_hidden =
      nb.dropout(nb.lstm(nb.concat_features({attention_hidden, context}), kRnn));
  const Tensor joined = nb.concat_features({decoder_hidden, context});
  const Tensor mel_step = nb.linear(joined, mels, true);  // linear_projection
  const Tensor gate_step = nb.linear(joined, 1, true);    // gate_layer
  nb.end_repeat();
  // The frames' outputs stacked: {frames, mels} and {frames, 1}.
  const Tensor mel = nb.copy_as(mel_step, {frames, mels});
  const Tensor gate = nb.copy_as(gate_step, {frames, 1});
  nb.end(mel, gate.elements());

  // Postnet: 5 convs with batch norm, tanh on all but the last, dropout on all; its output is
  // added to the decoder's mel frames. The loss (MSE on both mel outputs, BCE on the gate) closes
  // the last entry.
  Tensor y = to_channels(nb, mel);
  const Tensor mel_channels = y;
  for (int i = 0; i < 5; ++i) {
    const bool last = i == 4;
    nb.begin("postnet." + std::to_string(i), OpClass::conv,
             y.elements() + mel.elements() + gate.elements());
    y = nb.batch_norm(nb.conv2d(y, conv1d_spec(last ? mels : kPostnet, kPostnetKernel, true)));
    if (!last) y = nb.activation(y, Activation::tanh);
    y = nb.dropout(y);
    if (last) {
      y = nb.add(y, mel_channels);
      nb.loss(y);
      nb.loss(gate);
    }
    nb.end(y, last ? 0 : mel.elements() + gate.elements());
  }
  m.layers = nb.take_layers();
  return m;
}

ZooModel make_waveglow(const Hyperparameters& hp) {
  // paper: Prenger et al. 2019 (WaveGlow), Sec. 2-3, as DeepLearningExamples'
  // waveglow/arg_parser.py defaults code it: 80 mel channels, 12 flows over groups of 8 samples, 2
  // channels output early every 4 flows, coupling networks (WN) of 8 layers of 512 channels with
  // 3-tap dilated convolutions; the mel spectrogram is upsampled by a ConvTranspose1d of 1024 taps,
  // stride 256 (the STFT hop). Every WN convolution but the last is weight-normalised.
  constexpr std::int64_t kMels = 80;
  constexpr std::int64_t kGroup = 8;
  constexpr std::int64_t kEarlyEvery = 4;
  constexpr std::int64_t kEarlySize = 2;
  constexpr std::int64_t kUpsampleKernel = 1024;
  constexpr std::int64_t kHop = 256;
  constexpr std::int64_t kKernel = 3;
  const std::int64_t segment = hp.get("segment_length");
  const std::int64_t channels = hp.get("n_channels");
  const std::int64_t flows = hp.get("n_flows");
  const std::int64_t wn_layers = hp.get("n_layers");
  if (segment % kGroup != 0) {
    throw ShapeError("segment_length=" + std::to_string(segment) + " is not a multiple of " +
                     std::to_string(kGroup) + " samples (the flow's group)");
  }
  if (kGroup - (flows - 1) / kEarlyEvery * kEarlySize < 2) {
    throw ShapeError("n_flows=" + std::to_string(flows) +
                     " outputs every channel early, leaving none to transform");
  }
  const std::int64_t length = segment / kGroup;
  // STFT with centred frames (tacotron2_common/stft.py): segment / hop + 1 frames.
  const std::int64_t frames = segment / kHop + 1;
  ZooModel m;
  m.input_shape = {segment + kMels * frames};  // the audio segment and its mel spectrogram
  m.input_dtype = InputDtype::fp32;
  NetBuilder nb;

  nb.begin("upsample", OpClass::conv, static_cast<double>(kMels * frames));
  Tensor spect =
      nb.conv_transpose1d(nb.input({kMels, 1, frames}), kMels, kUpsampleKernel, kHop, true);
  // Trimmed to the segment and unfolded into groups: {80 * 8, 1, segment / 8}.
  spect = nb.copy_as(spect, {kMels * kGroup, 1, length});
  nb.end(spect);
  const double conditioning = spect.elements();

  // WN's layer i dilates its taps 2^i apart, padded to keep the length (waveglow/model.py, WN:
  // dilation = 2 ** i, padding = (kernel_size * dilation - dilation) / 2).
  auto conv = [&](const Tensor& in, std::int64_t out, std::int64_t kernel, bool normed,
                  std::int64_t dilation = 1) {
    if (normed) nb.weight_norm(out);
    Conv2d spec = conv1d_spec(out, kernel, true);
    spec.dilation_w = dilation;
    spec.pad_w = dilation * (kernel - 1) / 2;
    return nb.conv2d(in, spec);
  };
  Tensor audio = nb.input({kGroup, 1, length});
  double early = 0;  // channels already output, travelling to the loss
  for (std::int64_t k = 0; k < flows; ++k) {
    nb.begin("flow." + std::to_string(k), OpClass::conv, audio.elements() + conditioning + early);
    if (k % kEarlyEvery == 0 && k > 0) {
      early += static_cast<double>(kEarlySize * length);
      audio = nb.copy_as(audio, {audio.channels() - kEarlySize, 1, length});
    }
    const std::int64_t c = audio.channels();
    const std::int64_t half = c / 2;
    audio = nb.conv2d(audio, conv_spec(c, 1));  // invertible 1x1 convolution
    const Tensor audio_0 = nb.copy_as(audio, {half, 1, length});
    const Tensor audio_1 = nb.copy_as(audio, {c - half, 1, length});
    // WN: start, then layers of gated dilated convolutions conditioned on the spectrogram, with
    // residual and skip outputs; the end convolution gives log s and b.
    Tensor h = conv(audio_0, channels, 1, true);
    Tensor skips;
    for (std::int64_t i = 0; i < wn_layers; ++i) {
      const bool last = i + 1 == wn_layers;
      const Tensor in = nb.add(conv(h, 2 * channels, kKernel, true, std::int64_t{1} << i),
                               conv(spect, 2 * channels, 1, true));
      const Tensor acts =
          nb.mul(nb.activation(nb.copy_as(in, {channels, 1, length}), Activation::tanh),
                 nb.activation(nb.copy_as(in, {channels, 1, length}), Activation::sigmoid));
      const Tensor res_skip = conv(acts, last ? channels : 2 * channels, 1, true);
      if (!last) h = nb.add(nb.copy_as(res_skip, {channels, 1, length}), h);
      const Tensor skip = nb.copy_as(res_skip, {channels, 1, length});
      skips = i == 0 ? skip : nb.add(skips, skip);
    }
    const Tensor end = conv(skips, 2 * half, 1, false);
    // Affine coupling: audio_1 * exp(log s) + b (the exp is one more elementwise op, not counted).
    const Tensor coupled = nb.add(nb.mul(audio_1, nb.copy_as(end, {half, 1, length})),
                                  nb.copy_as(end, {half, 1, length}));
    audio = nb.concat({audio_0, coupled});
    if (k + 1 == flows) nb.loss(audio);  // -log likelihood: z^2, log s and log det W terms
    nb.end(audio, k + 1 == flows ? early : conditioning + early);
  }
  m.layers = nb.take_layers();
  return m;
}

}  // namespace trainsim::models
