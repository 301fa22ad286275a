#include "transport/verbs/hca_pairing.h"

#include <algorithm>
#include <optional>

namespace tent {

std::vector<std::pair<std::size_t, std::size_t>> pair_hcas(const std::vector<std::string>& local,
                                                           const std::vector<std::string>& peer) {
    std::vector<std::optional<std::size_t>> partner(local.size());
    std::vector<bool> taken(peer.size(), false);
    for (std::size_t i = 0; i < local.size(); ++i) {
        for (std::size_t j = 0; j < peer.size(); ++j) {
            if (!taken[j] && peer[j] == local[i]) {
                partner[i] = j;
                taken[j] = true;
                break;
            }
        }
    }
    // The others in order: the first unpaired local HCA with the first
    // unpaired peer HCA, and so on.
    std::size_t next_peer = 0;
    for (std::size_t i = 0; i < local.size(); ++i) {
        if (partner[i]) continue;
        while (next_peer < peer.size() && taken[next_peer]) ++next_peer;
        if (next_peer == peer.size()) break;
        partner[i] = next_peer;
        taken[next_peer] = true;
    }
    std::vector<std::pair<std::size_t, std::size_t>> pairs;
    for (std::size_t i = 0; i < local.size(); ++i)
        if (partner[i]) pairs.emplace_back(i, *partner[i]);
    return pairs;
}

} // namespace tent
