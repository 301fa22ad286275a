// Event verbs of adopted contexts: completion channels (channel.h) and
// asynchronous events (async_events.h).
#include <infiniband/verbs.h>

#include "activation.h"
#include "async_events.h"
#include "channel.h"
#include "context_table.h"
#include "real_verbs.h"
#include "runtime.h"
#include "common/log.h"

using namespace tent::interpose;

namespace {
// The adapter's error events that name a QP: for one tent carries, they
// concern the adapter's QP beneath it, which carries none of its work.
bool adapter_error_of_carried_qp(const ibv_async_event& event) {
    switch (event.event_type) {
    case IBV_EVENT_QP_FATAL:
    case IBV_EVENT_QP_REQ_ERR:
    case IBV_EVENT_QP_ACCESS_ERR:
    case IBV_EVENT_PATH_MIG_ERR:
        return carried_and_working(event.element.qp);
    default:
        return false;
    }
}
} // namespace

extern "C" __attribute__((visibility("default"))) ibv_comp_channel* ibv_create_comp_channel(ibv_context* context) {
    bool act = acting() && context && provider_ops(context);
    ibv_comp_channel* channel = real::create_comp_channel(context);
    if (channel && act) adopt_channel(channel);
    return channel;
}

extern "C" __attribute__((visibility("default"))) int ibv_destroy_comp_channel(ibv_comp_channel* channel) {
    if (channel) release_channel(channel);
    return real::destroy_comp_channel(channel);
}

extern "C" __attribute__((visibility("default"))) int ibv_get_cq_event(ibv_comp_channel* channel, ibv_cq** cq,
                                                                       void** cq_context) {
    if (!channel || !cq) return real::get_cq_event(channel, cq, cq_context);
    return channel_event(channel, cq, cq_context, real::get_cq_event);
}

extern "C" __attribute__((visibility("default"))) void ibv_ack_cq_events(ibv_cq* cq, unsigned int nevents) {
    if (cq) nevents = provider_acks(cq, nevents);
    if (nevents) real::ack_cq_events(cq, nevents);
}

extern "C" __attribute__((visibility("default"))) int ibv_get_async_event(ibv_context* context,
                                                                          ibv_async_event* event) {
    if (!context || !event) return real::get_async_event(context, event);
    for (;;) {
        int rc = async_event(context, event, real::get_async_event);
        if (rc != 0 || !adapter_error_of_carried_qp(*event)) return rc;
        // Taken and acknowledged here; the call goes on to the next event
        // (or EAGAIN on a non-blocking fd), as if this one never came.
        TENT_INFO("interpose-async", "interposer: qp 0x%x: %s from the adapter not passed on: tent carries the queue pair",
                  event->element.qp->qp_num, ibv_event_type_str(event->event_type));
        real::ack_async_event(event);
    }
}

extern "C" __attribute__((visibility("default"))) void ibv_ack_async_event(ibv_async_event* event) {
    if (event && own_event(event)) return;
    real::ack_async_event(event);
}
