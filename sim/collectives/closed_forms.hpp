#pragma once
// Alpha-beta closed forms of the collectives on a contention-free network, with a = latency of one
// message and b = seconds per byte (no reduction kernels). The gTop-k paper's reference code
// (hclhkbu/gtopkssgd) uses the same forms with b per element; non-powers of two use ceil(log2 P).

#include <cmath>

namespace trainsim::sim::collectives::closed_form {

inline double log2_ceil(int p) {
  return std::ceil(std::log2(static_cast<double>(p)));
}

// Ring allreduce: 2(P-1) steps of m/P.
inline double ring_allreduce_s(int p, double bytes, double a, double b) {
  return 2.0 * (p - 1) * a + 2.0 * (p - 1) / p * bytes * b;
}

// Rabenseifner halving-doubling on the largest power of two P' <= P: 2 log2 P' steps moving
// 2(P'-1)/P' x m; other ranks fold in before and get the result after (two more full messages).
inline double halving_doubling_allreduce_s(int p, double bytes, double a, double b) {
  int p2 = 1;
  while (2 * p2 <= p)
    p2 *= 2;
  const double core =
      2.0 * std::log2(static_cast<double>(p2)) * a + 2.0 * (p2 - 1) / p2 * bytes * b;
  return p2 == p ? core : core + 2.0 * (a + bytes * b);
}

// Top-k S-SGD: AllGather of 2k elements per rank of `element_bytes` each: a log2 P + 2(P-1)k b.
inline double topk_allgather_s(int p, double k, double element_bytes, double a, double b) {
  return log2_ceil(p) * a + 2.0 * (p - 1) * k * element_bytes * b;
}

// gTopKAllReduce as the paper counts it (Shi et al., ICDCS 2019, arXiv:1901.04359, eq. for
// gTopKAllReduce): log2 P tree rounds that reduce the top k (each moving 2k elements: k values
// and k indices), then log2 P rounds that broadcast the global top k back:
// 2 a log2 P + 4 k b log2 P.
inline double gtopk_allreduce_s(int p, double k, double element_bytes, double a, double b) {
  return 2.0 * log2_ceil(p) * a + 4.0 * k * element_bytes * log2_ceil(p) * b;
}

}  // namespace trainsim::sim::collectives::closed_form
