// Runtime devices and memory spaces: what the PJRT layer exposes as PJRT_Device / PJRT_Memory.
// Each device owns its streams (compute, host-to-device, device-to-host) on one se::Executor.
#ifndef EMBER_RUNTIME_DEVICE_H_
#define EMBER_RUNTIME_DEVICE_H_

#include <memory>
#include <string>
#include <vector>

#include "runtime/launch_admission.h"
#include "stream_executor/executor.h"
#include "stream_executor/stream.h"

namespace ember::runtime {

class Device;

// A memory a buffer can live in. Today each device has one, of kind "device".
class MemorySpace {
 public:
  MemorySpace(int id, std::string kind, int kind_id) : id_(id), kind_(std::move(kind)), kind_id_(kind_id) {}
  int id() const { return id_; }
  const std::string& kind() const { return kind_; }
  int kind_id() const { return kind_id_; }
  const std::vector<Device*>& devices() const { return devices_; }
  void AddDevice(Device* device) { devices_.push_back(device); }
  std::string DebugString() const;
  std::string ToString() const;

 private:
  int id_;
  std::string kind_;
  int kind_id_;
  std::vector<Device*> devices_;
};

class Device {
 public:
  Device(int id, int process_index, std::string platform, se::Executor* executor,
         std::unique_ptr<se::Stream> compute, std::unique_ptr<se::Stream> h2d,
         std::unique_ptr<se::Stream> d2h);
  // A device of another process of a multi-process job: known by its global id, process and
  // kind; it has no executor, streams or memories here, and nothing runs on it from here.
  static std::unique_ptr<Device> Remote(int id, int process_index, std::string platform,
                                        std::string kind);
  ~Device();

  int id() const { return id_; }
  // Whether this process drives the device (false for another process's device).
  bool addressable() const { return executor_ != nullptr; }
  // The device's ordinal on its platform; -1 for another process's device.
  int local_hardware_id() const { return executor_ != nullptr ? executor_->device_ordinal() : -1; }
  int process_index() const { return process_index_; }
  const std::string& platform() const { return platform_; }
  std::string Kind() const { return executor_ != nullptr ? executor_->DeviceKind() : remote_kind_; }
  std::string ToString() const;
  std::string DebugString() const;

  se::Executor* executor() const { return executor_; }
  se::Stream* compute_stream() const { return compute_.get(); }
  se::Stream* h2d_stream() const { return h2d_.get(); }
  se::Stream* d2h_stream() const { return d2h_.get(); }

  const std::vector<MemorySpace*>& memories() const { return memories_; }
  MemorySpace* default_memory() const { return memories_.empty() ? nullptr : memories_.front(); }
  void AddMemory(MemorySpace* memory) { memories_.push_back(memory); }

  // Waits until every stream of this device has finished its queued work.
  void Drain();

  // Bounds the launches queued on this device (Executable::Execute).
  LaunchAdmission& admission() { return admission_; }

 private:
  int id_;
  int process_index_;
  std::string platform_;
  se::Executor* executor_;
  std::unique_ptr<se::Stream> compute_;
  std::unique_ptr<se::Stream> h2d_;
  std::unique_ptr<se::Stream> d2h_;
  std::vector<MemorySpace*> memories_;
  std::string remote_kind_;  // Kind() of a remote device
  LaunchAdmission admission_;
};

}  // namespace ember::runtime

#endif  // EMBER_RUNTIME_DEVICE_H_
