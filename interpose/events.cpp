// Event verbs of adopted contexts: completion channels (channel.h) and
// asynchronous events (async_events.h).
#include <infiniband/verbs.h>

#include "activation.h"
#include "async_events.h"
#include "channel.h"
#include "context_table.h"
#include "real_verbs.h"

using namespace tent::interpose;

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
    return async_event(context, event, real::get_async_event);
}

extern "C" __attribute__((visibility("default"))) void ibv_ack_async_event(ibv_async_event* event) {
    if (event && own_event(event)) return;
    real::ack_async_event(event);
}
