// Recycling of large packet buffers by power-of-two size class, bounded in
// total so an idle process does not keep much memory.
#include <cstdlib>
#include <mutex>
#include <vector>

#include "simverbs.h"

namespace sv {

namespace {

constexpr size_t kMinPooled = 4096;
constexpr int kClasses = 20;                  // 4 KiB .. 2 GiB
constexpr size_t kMaxCachedBytes = 64u << 20;

struct Pool {
  std::mutex mu;
  std::vector<uint8_t*> free[kClasses];
  size_t cached = 0;
};

Pool& pool() {
  static Pool* p = new Pool();  // never destroyed: buffers may be freed at exit
  return *p;
}

int size_class(size_t n) {
  int c = 0;
  size_t cap = kMinPooled;
  while (cap < n && c < kClasses - 1) {
    cap <<= 1;
    c++;
  }
  return cap >= n ? c : -1;
}

size_t class_bytes(int c) { return kMinPooled << c; }

}  // namespace

uint8_t* pool_get(size_t n) {
  int c = n >= kMinPooled ? size_class(n) : -1;
  if (c < 0) return static_cast<uint8_t*>(malloc(n ? n : 1));
  Pool& p = pool();
  {
    std::lock_guard<std::mutex> g(p.mu);
    if (!p.free[c].empty()) {
      uint8_t* b = p.free[c].back();
      p.free[c].pop_back();
      p.cached -= class_bytes(c);
      return b;
    }
  }
  return static_cast<uint8_t*>(malloc(class_bytes(c)));
}

void pool_put(uint8_t* b, size_t n) {
  if (!b) return;
  int c = n >= kMinPooled ? size_class(n) : -1;
  if (c >= 0) {
    Pool& p = pool();
    std::lock_guard<std::mutex> g(p.mu);
    if (p.cached + class_bytes(c) <= kMaxCachedBytes) {
      p.free[c].push_back(b);
      p.cached += class_bytes(c);
      return;
    }
  }
  free(b);
}

}  // namespace sv
