#pragma once
// What the host side of an input pipeline costs: the CPU stages that produce one fresh batch
// (read, decode, augment, batch, with data echoing's extra work) on a replica's share of the
// host's workers, and the host-to-device copy of one batch. The data-parallel step and the
// pipeline's stage 0 are fed by the same pipeline model.

#include "models/scenario.hpp"

namespace trainsim::models {

// Host-side cost of one fresh group (the batch that echoing turns into echo_factor batches).
struct UpstreamStages {
  double read_s = 0;
  double decode_s = 0;
  double augment_s = 0;
  double batch_s = 0;
  double total_s() const { return read_s + decode_s + augment_s + batch_s; }
};

// A fresh batch of `batch` samples for one of `replicas_per_host` replicas sharing the host's
// workers and storage bandwidth (each gets a possibly fractional share). Zero without input.
UpstreamStages upstream_stages(const Scenario& s, double batch, double replicas_per_host);

// Host-to-device copy of `batch` samples in the scenario's input dtype. Zero without input.
double h2d_batch_s(const Scenario& s, double batch);
// The bytes of that copy (input_dtype elements of `batch` samples).
double h2d_batch_bytes(const Scenario& s, double batch);

}  // namespace trainsim::models
