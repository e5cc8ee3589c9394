#pragma once
// A move-only `void()` callable stored inline in a fixed number of bytes: scheduling an event
// never allocates. Captures larger than the capacity are a compile error, not a silent heap
// fallback (capture a pointer or an index into your own storage instead).

#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>

namespace trainsim::sim {

template <std::size_t Capacity>
class InlineCallback {
 public:
  InlineCallback() = default;

  template <typename F,
            typename = std::enable_if_t<!std::is_same_v<std::decay_t<F>, InlineCallback>>>
  InlineCallback(F&& f) {  // NOLINT(google-explicit-constructor): callables convert implicitly
    using Fn = std::decay_t<F>;
    static_assert(sizeof(Fn) <= Capacity, "callback capture too large for InlineCallback");
    static_assert(alignof(Fn) <= alignof(std::max_align_t), "callback over-aligned");
    static_assert(std::is_nothrow_move_constructible_v<Fn>, "callback must be nothrow-movable");
    ::new (static_cast<void*>(storage_)) Fn(std::forward<F>(f));
    ops_ = &ops_for<Fn>;
  }

  InlineCallback(InlineCallback&& other) noexcept { take(other); }
  InlineCallback& operator=(InlineCallback&& other) noexcept {
    if (this != &other) {
      reset();
      take(other);
    }
    return *this;
  }
  InlineCallback(const InlineCallback&) = delete;
  InlineCallback& operator=(const InlineCallback&) = delete;
  ~InlineCallback() { reset(); }

  explicit operator bool() const { return ops_ != nullptr; }
  void operator()() { ops_->invoke(storage_); }

  void reset() {
    if (ops_ != nullptr) {
      ops_->destroy(storage_);
      ops_ = nullptr;
    }
  }

 private:
  struct Ops {
    void (*invoke)(std::byte*);
    void (*move_to)(std::byte* from, std::byte* to);
    void (*destroy)(std::byte*);
  };
  template <typename Fn>
  static constexpr Ops ops_for{[](std::byte* p) { (*std::launder(reinterpret_cast<Fn*>(p)))(); },
                               [](std::byte* from, std::byte* to) {
                                 Fn* src = std::launder(reinterpret_cast<Fn*>(from));
                                 ::new (static_cast<void*>(to)) Fn(std::move(*src));
                                 src->~Fn();
                               },
                               [](std::byte* p) { std::launder(reinterpret_cast<Fn*>(p))->~Fn(); }};

  void take(InlineCallback& other) noexcept {
    if (other.ops_ != nullptr) {
      other.ops_->move_to(other.storage_, storage_);
      ops_ = other.ops_;
      other.ops_ = nullptr;
    }
  }

  alignas(std::max_align_t) std::byte storage_[Capacity];
  const Ops* ops_ = nullptr;
};

}  // namespace trainsim::sim
