#include "transport/verbs/verbs_device.h"

#include <fcntl.h>

#include <cerrno>
#include <vector>

#include "common/log.h"
#include "transport/verbs/gid.h"
#include "transport/verbs/verbs_memory.h"

namespace tent {

namespace {

struct DeviceListDeleter {
    void operator()(ibv_device** list) const { ibv_free_device_list(list); }
};

Status query_port(ibv_context* ctx, const std::string& name, std::uint8_t port_num, int gid_index,
                  VerbsPortInfo* out) {
    ibv_port_attr pa{};
    if (int err = ibv_query_port(ctx, port_num, &pa))
        return Status::from_errno(err, "ibv_query_port(" + name + ":" + std::to_string(port_num) + ")");
    out->port_num = port_num;
    out->lid = pa.lid;
    out->active_mtu = pa.active_mtu;
    out->link_layer = pa.link_layer;
    out->max_msg_sz = pa.max_msg_sz;
    out->state = pa.state;

    std::vector<ibv_gid> table(static_cast<std::size_t>(pa.gid_tbl_len));
    for (std::size_t i = 0; i < table.size(); ++i)
        if (ibv_query_gid(ctx, port_num, static_cast<int>(i), &table[i])) table[i] = ibv_gid{};
    if (gid_index >= 0) {
        if (static_cast<std::size_t>(gid_index) >= table.size())
            return Status(Code::OutOfRange, "verbs_gid_index " + std::to_string(gid_index) + " is beyond " + name +
                                                "'s GID table of " + std::to_string(table.size()) + " entries");
        out->gid_index = gid_index;
    } else {
        int found = select_ipv4_gid(table);
        out->gid_index = found >= 0 ? found : 0;
    }
    if (!table.empty()) out->gid = table[static_cast<std::size_t>(out->gid_index)];
    return Status::ok();
}

} // namespace

Result<std::shared_ptr<VerbsDevice>> VerbsDevice::open(const std::string& name, std::uint8_t port_num,
                                                       int gid_index) {
    int count = 0;
    std::unique_ptr<ibv_device*, DeviceListDeleter> list(ibv_get_device_list(&count));
    if (!list) return Status::from_errno(errno, "ibv_get_device_list");
    ibv_device* found = nullptr;
    for (int i = 0; i < count && !found; ++i)
        if (name == ibv_get_device_name(list.get()[i])) found = list.get()[i];
    if (!found) return Status(Code::NotFound, "no RDMA device named " + name);

    std::shared_ptr<VerbsDevice> dev(new VerbsDevice());
    dev->name_ = name;
    dev->context_ = ibv_open_device(found);
    if (!dev->context_) return Status::from_errno(errno, "ibv_open_device(" + name + ")");
    // read_async_events() must never block.
    int flags = fcntl(dev->context_->async_fd, F_GETFL);
    if (flags < 0 || fcntl(dev->context_->async_fd, F_SETFL, flags | O_NONBLOCK) < 0)
        return Status::from_errno(errno, "fcntl(O_NONBLOCK) on the async fd of " + name);
    if (int err = ibv_query_device(dev->context_, &dev->attr_))
        return Status::from_errno(err, "ibv_query_device(" + name + ")");
    if (port_num < 1 || port_num > dev->attr_.phys_port_cnt)
        return Status(Code::OutOfRange, name + " has no port " + std::to_string(port_num));
    if (Status s = query_port(dev->context_, name, port_num, gid_index, &dev->port_); !s) return s;
    dev->pd_ = ibv_alloc_pd(dev->context_);
    if (!dev->pd_) return Status::from_errno(errno, "ibv_alloc_pd(" + name + ")");
    TENT_DEBUG("verbs device open", "%s:%u gid[%d] %s lid %u", name.c_str(), unsigned(port_num),
               dev->port_.gid_index, gid_text(dev->port_.gid).c_str(), unsigned(dev->port_.lid));
    return dev;
}

VerbsDevice::~VerbsDevice() {
    if (pd_) {
        if (int err = ibv_dealloc_pd(pd_))
            TENT_WARN("verbs dealloc pd failed", "ibv_dealloc_pd(%s): error %d", name_.c_str(), err);
    }
    if (context_) ibv_close_device(context_);
}

Result<std::unique_ptr<VerbsMemoryRegion>> VerbsDevice::register_memory(void* addr, std::size_t len, int access) {
    ibv_mr* mr = ibv_reg_mr(pd_, addr, len, access);
    if (!mr) return Status::from_errno(errno, "ibv_reg_mr(" + std::to_string(len) + " bytes) on " + name_);
    return std::make_unique<VerbsMemoryRegion>(shared_from_this(), mr);
}

void VerbsDevice::read_async_events(std::vector<VerbsAsyncEvent>& out) {
    ibv_async_event ev{};
    while (ibv_get_async_event(context_, &ev) == 0) {  // non-blocking fd: EAGAIN ends it
        VerbsAsyncEvent e = classify_async_event(ev);  // before the ack releases ev
        ibv_ack_async_event(&ev);
        TENT_INFO("verbs async event", "%s: %s (port %u qp 0x%x)", name_.c_str(), ibv_event_type_str(e.type),
                  unsigned(e.port_num), e.qp_num);
        out.push_back(e);
    }
}

} // namespace tent
