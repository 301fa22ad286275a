// Device verbs: opening a device while the interposer acts adopts the
// context (its hot-path ops become the interposer's). The context itself is
// the provider's, so every verb the interposer does not wrap keeps working.
#include <infiniband/verbs.h>

#include "activation.h"
#include "async_events.h"
#include "common/log.h"
#include "context_table.h"
#include "real_verbs.h"
#include "settings.h"

using namespace tent::interpose;

extern "C" __attribute__((visibility("default"))) ibv_context* ibv_open_device(ibv_device* device) {
    bool act = acting();
    ibv_context* context = real::open_device(device);
    if (context && act) {
        ensure_configured();
        adopt_context(context);
        adopt_async_fd(context);
        TENT_DEBUG("interpose-adopt", "interposer adopted context of %s", ibv_get_device_name(device));
    }
    return context;
}

extern "C" __attribute__((visibility("default"))) int ibv_close_device(ibv_context* context) {
    if (context) {
        release_async_fd(context);
        release_context(context);
    }
    return real::close_device(context);
}
