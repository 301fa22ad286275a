// A memory region registered on one device: the keys a rail's work requests
// carry. Deregistered when the object goes; it keeps its device alive.
#pragma once

#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>
#include <memory>

namespace tent {

class VerbsDevice;

class VerbsMemoryRegion {
public:
    VerbsMemoryRegion(std::shared_ptr<VerbsDevice> device, ibv_mr* mr);
    ~VerbsMemoryRegion();
    VerbsMemoryRegion(const VerbsMemoryRegion&) = delete;
    VerbsMemoryRegion& operator=(const VerbsMemoryRegion&) = delete;

    std::uint32_t lkey() const { return mr_->lkey; }
    std::uint32_t rkey() const { return mr_->rkey; }
    void* addr() const { return mr_->addr; }
    std::size_t length() const { return mr_->length; }

private:
    std::shared_ptr<VerbsDevice> device_;  // the PD must outlive the MR
    ibv_mr* mr_;
};

} // namespace tent
