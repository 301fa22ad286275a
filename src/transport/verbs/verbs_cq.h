// A completion queue with its own completion channel, so its owner (one
// rail) has a file descriptor to wait on and never sees another rail's
// completions.
#pragma once

#include <infiniband/verbs.h>

#include <memory>

#include "common/status.h"

namespace tent {

class VerbsDevice;

class VerbsCompletionQueue {
public:
    static Result<std::unique_ptr<VerbsCompletionQueue>> create(std::shared_ptr<VerbsDevice> device, int depth);
    ~VerbsCompletionQueue();
    VerbsCompletionQueue(const VerbsCompletionQueue&) = delete;
    VerbsCompletionQueue& operator=(const VerbsCompletionQueue&) = delete;

    ibv_cq* cq() const { return cq_; }
    // Readable when a completion arrived after the last arm().
    int wait_fd() const { return channel_->fd; }
    // Consume pending channel events (without blocking) and ask for the next
    // one. Poll the CQ after arming: a completion that came before is there.
    Status arm();

private:
    void ack_events();  // consume and acknowledge pending channel events

    VerbsCompletionQueue(std::shared_ptr<VerbsDevice> device, ibv_comp_channel* channel, ibv_cq* cq);

    std::shared_ptr<VerbsDevice> device_;
    ibv_comp_channel* channel_;
    ibv_cq* cq_;
};

} // namespace tent
