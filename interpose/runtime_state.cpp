// The interposer's tables, and the completions it queues for the program.
#include "runtime_state.h"

#include "channel.h"

namespace tent::interpose {

// Lives until the process ends: QPs, the engine and its threads may be in
// use until then, so nothing here is torn down by a static destructor.
State& state() {
    static State* s = new State;  // deliberately never freed
    return *s;
}

void push_wc(State& s, ibv_cq* cq, const ibv_wc& wc) {
    s.cqs[cq].wcs.push_back(wc);
    cq_completed(cq);  // an armed CQ with a channel signals it
}

} // namespace tent::interpose
