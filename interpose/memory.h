// Memory regions the application registers on adopted contexts: where they
// lie, so that work requests on carried queue pairs can name them to tent
// (registered with tent's engine when first needed), and the keys the peer
// announces for its own regions.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <vector>

#include "tent/tent.h"

namespace tent::interpose {

// One region as tent sees it: its tent registration and the application's view.
struct RegionView {
    std::uint8_t* addr = nullptr;  // local address of the region's first byte
    std::uint64_t iova = 0;        // the address work requests use for it
    std::uint64_t length = 0;
    tent_mem_t* mem = nullptr;
};

void track_mr(ibv_mr* mr, std::uint64_t iova, int access);
void forget_mr(ibv_mr* mr);

// The region of CONTEXT with local key LKEY holding [iova, iova + length),
// registered with tent (engine) if it was not yet; false if there is none.
bool local_region(ibv_context* context, std::uint32_t lkey, std::uint64_t iova, std::uint64_t length,
                  tent_engine_t* engine, RegionView* out);

// A region the peer may access, as announced: its rkey, iova, length and
// tent remote key.
struct Announcement {
    std::uint32_t rkey = 0;
    std::uint32_t pad = 0;
    std::uint64_t iova = 0;
    std::uint64_t length = 0;
    std::uint64_t addr = 0;  // where the region lies in the peer (tent's remote address)
    std::uint8_t key[TENT_REMOTE_KEY_SIZE] = {};
};

// Every region of CONTEXT open to remote access, registered with tent
// (engine) if it was not yet.
std::vector<Announcement> announcements(ibv_context* context, tent_engine_t* engine);

} // namespace tent::interpose
