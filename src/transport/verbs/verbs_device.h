// One opened HCA port: context, protection domain, the port's attributes
// and the GID rails on it use, and the device's asynchronous events (port
// down/up, device fatal, QP fatal) for the health layer. Everything is
// released when the last owner (rails and memory regions hold a share) goes.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "transport/verbs/async_event.h"

namespace tent {

class VerbsMemoryRegion;

struct VerbsPortInfo {
    std::uint8_t port_num = 1;
    std::uint16_t lid = 0;
    ibv_mtu active_mtu = IBV_MTU_1024;
    std::uint8_t link_layer = IBV_LINK_LAYER_UNSPECIFIED;
    int gid_index = 0;
    ibv_gid gid{};
    std::uint32_t max_msg_sz = 0;
    ibv_port_state state = IBV_PORT_NOP;
};

class VerbsDevice : public std::enable_shared_from_this<VerbsDevice> {
public:
    // Opens `name` (e.g. "mlx5_0") and its port. gid_index -1 picks the first
    // RoCE v2 IPv4 GID (::ffff:a.b.c.d), falling back to index 0.
    static Result<std::shared_ptr<VerbsDevice>> open(const std::string& name, std::uint8_t port_num = 1,
                                                     int gid_index = -1);
    ~VerbsDevice();
    VerbsDevice(const VerbsDevice&) = delete;
    VerbsDevice& operator=(const VerbsDevice&) = delete;

    const std::string& name() const { return name_; }
    ibv_context* context() const { return context_; }
    ibv_pd* pd() const { return pd_; }
    const ibv_device_attr& attr() const { return attr_; }
    const VerbsPortInfo& port() const { return port_; }

    // Registers [addr, addr+len) with `access` (IBV_ACCESS_* flags).
    Result<std::unique_ptr<VerbsMemoryRegion>> register_memory(void* addr, std::size_t len, int access);

    // Readable when an asynchronous event is pending.
    int async_fd() const { return context_->async_fd; }
    // Appends every pending event without blocking (each is acknowledged).
    void read_async_events(std::vector<VerbsAsyncEvent>& out);

private:
    VerbsDevice() = default;

    std::string name_;
    ibv_context* context_ = nullptr;
    ibv_pd* pd_ = nullptr;
    ibv_device_attr attr_{};
    VerbsPortInfo port_;
};

} // namespace tent
