#include "context_table.h"

#include <memory>
#include <mutex>
#include <shared_mutex>
#include <vector>

#include "cq_ex.h"
#include "dispatch.h"
#include "qp_ex.h"

namespace tent::interpose {

namespace {

struct Entry {
    const ibv_context* context;
    std::unique_ptr<ProviderOps> ops;  // stable address while the context is open
};

struct Table {
    std::shared_mutex mutex;
    std::vector<Entry> entries;  // a program opens few contexts
};

// Never freed: the engine closes its devices in an exit handler, which
// runs after static destructors when the program exits while the engine
// is still starting (the handler is registered then).
Table& table() {
    static auto* t = new Table;
    return *t;
}

} // namespace

void adopt_context(ibv_context* context) {
    auto ops = std::make_unique<ProviderOps>();
    ops->post_send = context->ops.post_send;
    ops->post_recv = context->ops.post_recv;
    ops->poll_cq = context->ops.poll_cq;
    ops->req_notify_cq = context->ops.req_notify_cq;
    ops->post_srq_recv = context->ops.post_srq_recv;
    {
        std::unique_lock lock(table().mutex);
        table().entries.push_back({context, std::move(ops)});
    }
    context->ops.post_send = dispatch_post_send;
    context->ops.post_recv = dispatch_post_recv;
    context->ops.poll_cq = dispatch_poll_cq;
    context->ops.req_notify_cq = dispatch_req_notify_cq;
    context->ops.post_srq_recv = dispatch_post_srq_recv;
    CreateQpEx provider = adopt_create_qp_ex(context);
    CreateCqEx provider_cq = adopt_create_cq_ex(context);
    std::unique_lock lock(table().mutex);
    for (auto& e : table().entries)
        if (e.context == context) {
            e.ops->create_qp_ex = provider;
            e.ops->create_cq_ex = provider_cq;
        }
}

void release_context(ibv_context* context) {
    std::unique_lock lock(table().mutex);
    for (auto it = table().entries.begin(); it != table().entries.end(); ++it) {
        if (it->context != context) continue;
        context->ops.post_send = it->ops->post_send;
        context->ops.post_recv = it->ops->post_recv;
        context->ops.poll_cq = it->ops->poll_cq;
        context->ops.req_notify_cq = it->ops->req_notify_cq;
        context->ops.post_srq_recv = it->ops->post_srq_recv;
        release_create_qp_ex(context, it->ops->create_qp_ex);
        release_create_cq_ex(context, it->ops->create_cq_ex);
        table().entries.erase(it);
        return;
    }
}

const ProviderOps* provider_ops(const ibv_context* context) {
    std::shared_lock lock(table().mutex);
    for (const auto& e : table().entries)
        if (e.context == context) return e.ops.get();
    return nullptr;
}

} // namespace tent::interpose
