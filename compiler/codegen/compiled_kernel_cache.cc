#include "compiler/codegen/compiled_kernel_cache.h"

#include <cctype>

namespace ember::codegen {
namespace {

// A sweep of expired entries after this many inserts (bounds the map by what is alive).
constexpr int64_t kSweepEvery = 256;

}  // namespace

CompiledKernelCache& CompiledKernelCache::Get() {
  // Never destroyed: executables may release their kernels during static destruction.
  static CompiledKernelCache* const cache = new CompiledKernelCache();
  return *cache;
}

std::optional<CompiledKernelCache::Entry> CompiledKernelCache::Find(const std::string& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return std::nullopt;
  std::shared_ptr<const void> owner = it->second.owner.lock();
  if (owner == nullptr) {
    entries_.erase(it);
    return std::nullopt;
  }
  return Entry{it->second.address, std::move(owner)};
}

void CompiledKernelCache::Insert(const std::string& key, void* address,
                                 const std::shared_ptr<const void>& owner) {
  std::lock_guard<std::mutex> lock(mutex_);
  entries_[key] = Stored{address, owner};
  if (++inserts_since_sweep_ >= kSweepEvery) SweepLocked();
}

int64_t CompiledKernelCache::live_entries() {
  std::lock_guard<std::mutex> lock(mutex_);
  SweepLocked();
  return static_cast<int64_t>(entries_.size());
}

void CompiledKernelCache::SweepLocked() {
  inserts_since_sweep_ = 0;
  for (auto it = entries_.begin(); it != entries_.end();) {
    it = it->second.owner.expired() ? entries_.erase(it) : std::next(it);
  }
}

std::string KernelCacheKey(std::string text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    out.push_back(text[i]);
    if (text[i] != '!' || i + 1 >= text.size() ||
        !std::isdigit(static_cast<unsigned char>(text[i + 1]))) {
      continue;
    }
    while (i + 1 < text.size() && std::isdigit(static_cast<unsigned char>(text[i + 1]))) ++i;
    out.push_back('N');
  }
  return out;
}

}  // namespace ember::codegen
