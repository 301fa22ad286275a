#include "transport/verbs/verbs_memory.h"

#include <cerrno>

#include "common/log.h"

namespace tent {

VerbsMemoryRegion::VerbsMemoryRegion(std::shared_ptr<VerbsDevice> device, ibv_mr* mr)
    : device_(std::move(device)), mr_(mr) {}

VerbsMemoryRegion::~VerbsMemoryRegion() {
    if (int err = ibv_dereg_mr(mr_))
        TENT_WARN("verbs dereg failed", "ibv_dereg_mr: %s", Status::from_errno(err, "dereg").message().c_str());
}

} // namespace tent
