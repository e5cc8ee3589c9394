#include "models/input_pipeline.hpp"

#include <algorithm>

namespace trainsim::models {

UpstreamStages upstream_stages(const Scenario& s, double batch, double replicas_per_host) {
  UpstreamStages u;
  if (!s.input.enabled) return u;
  const auto& in = s.input;
  const double b = batch;
  const double e = in.echo_factor;
  const double workers = in.workers / replicas_per_host;
  const double storage_s = b * in.storage_bytes_per_sample * replicas_per_host /
                           s.cluster.host.storage_read_bw_bytes_per_s;
  u.read_s = std::max(b * in.read_s_per_sample / workers, storage_s);
  u.decode_s = b * in.decode_s_per_sample / workers;
  // Echoing before augmentation augments every copy again; batch echoing repeats finished
  // batches, example echoing batches e x b samples out of the shuffle buffer.
  u.augment_s = b * in.augment_s_per_sample * (in.echo_before_augment ? e : 1) / workers;
  u.batch_s = b * in.batch_s_per_sample * (in.echo_mode == EchoMode::example ? e : 1) / workers;
  return u;
}

double h2d_batch_bytes(const Scenario& s, double batch) {
  const double elements = s.model.input_bytes_per_sample() / input_dtype_bytes(s.model.input_dtype);
  return batch * elements * input_dtype_bytes(s.input.input_dtype);
}

double h2d_batch_s(const Scenario& s, double batch) {
  if (!s.input.enabled) return 0;
  return s.cluster.host_link.latency_s +
         h2d_batch_bytes(s, batch) / s.cluster.host_link.bw_bytes_per_s;
}

}  // namespace trainsim::models
