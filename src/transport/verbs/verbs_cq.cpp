#include "transport/verbs/verbs_cq.h"

#include <fcntl.h>

#include <cerrno>

#include "common/log.h"
#include "transport/verbs/verbs_device.h"

namespace tent {

Result<std::unique_ptr<VerbsCompletionQueue>> VerbsCompletionQueue::create(std::shared_ptr<VerbsDevice> device,
                                                                           int depth) {
    ibv_comp_channel* channel = ibv_create_comp_channel(device->context());
    if (!channel) return Status::from_errno(errno, "ibv_create_comp_channel on " + device->name());
    // progress() must never block on the channel.
    int flags = fcntl(channel->fd, F_GETFL);
    if (flags < 0 || fcntl(channel->fd, F_SETFL, flags | O_NONBLOCK) < 0) {
        int err = errno;
        ibv_destroy_comp_channel(channel);
        return Status::from_errno(err, "fcntl(O_NONBLOCK) on a completion channel of " + device->name());
    }
    ibv_cq* cq = ibv_create_cq(device->context(), depth, nullptr, channel, 0);
    if (!cq) {
        int err = errno;
        ibv_destroy_comp_channel(channel);
        return Status::from_errno(err, "ibv_create_cq(" + std::to_string(depth) + ") on " + device->name());
    }
    std::unique_ptr<VerbsCompletionQueue> q(new VerbsCompletionQueue(std::move(device), channel, cq));
    if (Status s = q->arm(); !s) return s;
    return q;
}

VerbsCompletionQueue::VerbsCompletionQueue(std::shared_ptr<VerbsDevice> device, ibv_comp_channel* channel,
                                           ibv_cq* cq)
    : device_(std::move(device)), channel_(channel), cq_(cq) {}

VerbsCompletionQueue::~VerbsCompletionQueue() {
    ack_events();  // ibv_destroy_cq waits until every delivered event is acknowledged
    if (int err = ibv_destroy_cq(cq_))
        TENT_WARN("verbs destroy cq failed", "ibv_destroy_cq on %s: error %d", device_->name().c_str(), err);
    if (int err = ibv_destroy_comp_channel(channel_))
        TENT_WARN("verbs destroy channel failed", "ibv_destroy_comp_channel on %s: error %d",
                  device_->name().c_str(), err);
}

void VerbsCompletionQueue::ack_events() {
    unsigned events = 0;
    ibv_cq* ev_cq = nullptr;
    void* ev_ctx = nullptr;
    while (ibv_get_cq_event(channel_, &ev_cq, &ev_ctx) == 0) ++events;  // non-blocking fd: EAGAIN ends it
    if (events) ibv_ack_cq_events(cq_, events);
}

Status VerbsCompletionQueue::arm() {
    ack_events();
    if (int err = ibv_req_notify_cq(cq_, 0)) return Status::from_errno(err, "ibv_req_notify_cq on " + device_->name());
    return Status::ok();
}

} // namespace tent
