#include "runtime/device.h"

#include "absl/strings/str_cat.h"

namespace ember::runtime {

std::string MemorySpace::DebugString() const {
  return absl::StrCat("MemorySpace(id=", id_, ", kind=", kind_,
                      devices_.empty() ? "" : absl::StrCat(", device=", devices_[0]->id()), ")");
}

std::string MemorySpace::ToString() const {
  return absl::StrCat("MEMORY_SPACE_", id_, "(", kind_, ")");
}

Device::Device(int id, int process_index, std::string platform, se::Executor* executor,
               std::unique_ptr<se::Stream> compute, std::unique_ptr<se::Stream> h2d,
               std::unique_ptr<se::Stream> d2h)
    : id_(id),
      process_index_(process_index),
      platform_(std::move(platform)),
      executor_(executor),
      compute_(std::move(compute)),
      h2d_(std::move(h2d)),
      d2h_(std::move(d2h)) {}

std::unique_ptr<Device> Device::Remote(int id, int process_index, std::string platform,
                                       std::string kind) {
  auto device = std::make_unique<Device>(id, process_index, std::move(platform), nullptr, nullptr,
                                         nullptr, nullptr);
  device->remote_kind_ = std::move(kind);
  return device;
}

Device::~Device() { Drain(); }

std::string Device::ToString() const {
  return absl::StrCat("EmberDevice(id=", id_, ", platform=", platform_, ")");
}

std::string Device::DebugString() const {
  return absl::StrCat("ember:", platform_, ":", id_);
}

void Device::Drain() {
  // Work on one stream can enqueue follow-up work on another (a transfer waiting on a buffer's
  // definition), so drain twice in stream order.
  for (int pass = 0; pass < 2; ++pass) {
    for (se::Stream* stream : {h2d_.get(), compute_.get(), d2h_.get()}) {
      if (stream != nullptr) stream->BlockHostUntilDone().IgnoreError();
    }
  }
}

}  // namespace ember::runtime
