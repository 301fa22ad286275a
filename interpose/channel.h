// Completion channels of adopted contexts. The program's channel stays the
// provider's object, but its fd becomes an epoll set of the provider's fd
// and an eventfd the interposer signals, so that a completion tent produces
// on an armed CQ makes the fd readable and ibv_get_cq_event returns that CQ,
// as one the adapter produced would.
#pragma once

#include <infiniband/verbs.h>

namespace tent::interpose {

// Takes over CHANNEL (just created by the provider); false leaves it as is.
bool adopt_channel(ibv_comp_channel* channel);
// Gives CHANNEL its own fd back before the provider destroys it.
void release_channel(ibv_comp_channel* channel);
// The next event of CHANNEL: tent's or the provider's (through fn).
int channel_event(ibv_comp_channel* channel, ibv_cq** cq, void** cq_context,
                  int (*provider_get)(ibv_comp_channel*, ibv_cq**, void**));
// Acknowledgements the provider must see: NEVENTS less those of tent's events.
unsigned provider_acks(ibv_cq* cq, unsigned nevents);

// While alive, the events this thread queues on CHANNEL skip its eventfd:
// for channel_event's own thread, settling what its wait woke for, which
// looks at CHANNEL's queue next. The eventfd would only be written and read
// back (two system calls per event); channel_event counts what it leaves
// queued on the eventfd before it returns. Events queued by other threads,
// or during the wait (which the eventfd must wake), are counted as ever.
class QuietEvents {
public:
    explicit QuietEvents(const ibv_comp_channel* channel);
    ~QuietEvents();
    QuietEvents(const QuietEvents&) = delete;
    QuietEvents& operator=(const QuietEvents&) = delete;

private:
    const ibv_comp_channel* previous_;
};

// From the CQ verbs: the program armed CQ; tent produced a completion on CQ.
void cq_armed(ibv_cq* cq);
void cq_completed(ibv_cq* cq);
// Whether the program armed a CQ with a channel that tent has not yet
// signalled: it may be asleep on that channel, waiting for tent.
bool any_cq_armed();

} // namespace tent::interpose
